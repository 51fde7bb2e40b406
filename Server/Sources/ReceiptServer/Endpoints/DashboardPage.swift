import HTTPTypes
import Hummingbird
import NIOCore
import ReceiptCore

/// The page itself.
struct DashboardPage {
    let figure: FigureQuery
    let counts: [SubscriptionCount]
    let mrr: (lines: [MRRLine], unclassified: Int64, unclassifiedCurrencies: [String])
    let flows: [IntervalFlows]
    let revenue: [IntervalRevenue]
    let rates: [IntervalRates]
    let churn: [IntervalChurn]
    let active: [IntervalActive]
    /// Over all products, whatever the page's product.
    let movement: [IntervalMRRMovement]
    /// Nil unless the page was asked for them (`cohorts=1`).
    let cohorts: [IntervalCohort]?
    /// The cards, over the range and the one before it, which begins at `previousFrom`; what stood
    /// is read at the range's first midnight and its last (nil: none in the range), as their links are.
    let cards: [RangeCard]
    let previousFrom: Int64
    let cardMidnights: (first: Int64, last: Int64?)

    var html: String {
        var page = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>receipt serve: subscriptions</title>
            <style>
            \(Self.style)
            .legend span { display: inline-block; width: 10px; height: 10px; margin: 0 4px 0 12px; }
            .cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 8px 0 24px; }
            .card { border: 1px solid #ddd; border-radius: 6px; padding: 8px 14px; min-width: 140px; }
            .card h3 { font-size: 13px; font-weight: normal; margin: 0; color: #555; }
            .card .value { font-size: 22px; margin: 4px 0; }
            .card .previous, .card .change { font-size: 12px; margin: 0; color: #555; }
            </style></head><body>
            <h1>Subscriptions</h1>
            <form method="get" action="/dashboard">
            From <input type="date" name="from" value="\(Self.date(figure.from))">
            to <input type="date" name="to" value="\(Self.date(figure.to))">
            \(cohorts == nil ? "" : "<input type=\"hidden\" name=\"\(DashboardController.cohortsParameter)\" value=\"1\">")
            by <select name="by">\(FigureInterval.allCases.map { "<option\($0 == figure.interval ? " selected" : "")>\($0.rawValue)</option>" }.joined())</select>
            product <select name="product">\(productOptions)</select>
            <button>Show</button> <a href="\(CustomerPageController.path)">a customer</a></form>
            <p>Figures\(figure.product.map { " of <span id=\"product\">\(Self.escape($0))</span>" } ?? "") at <time data-figure="at_ms" data-value="\(figure.at)">\(Self.date(figure.at))</time> (UTC), from the
            Apple-signed rows of this store; README defines each.</p>

            """ + cardsSection
        let sections = [("subscriptions", statusTable), ("mrr", mrrTable), ("flows", flowsSection), ("revenue", revenueTable),
                        ("rates", ratesTable), ("churn", churnTable), ("active", activeTable), ("mrr_movement", movementTable),
                        ("cohorts", cohortTables)]
        page += sections.map { name, section in section + csvLink(name) }.joined() + "</body></html>\n"
        return page
    }

    /// A link to a figure's CSV (DashboardController.csvPath) for the page's range, instant and
    /// product, as that figure takes them (StatsController: over a range or not, judged at an instant or not).
    private func csvLink(_ name: String) -> String {
        let query = pageQuery.filter { parameter in
            let key = String(parameter.prefix { $0 != "=" })
            if FigureQuery.rangeParameters.contains(key) { return StatsController.rangedFigures.contains(name) }
            if key == "product" { return !StatsController.allProductFigures.contains(name) }
            return key != "at" || !StatsController.instantlessFigures.contains(name)
        }
        let href = DashboardController.csvPath + name + "?" + query.joined(separator: "&")
        return "<p class=\"csv\"><a href=\"\(Self.escape(href))\" download>\(name).csv</a></p>\n"
    }

    /// The page of the subscriptions behind a count of `status` (SubscriptionListController), at the
    /// page's instant when it was asked for one (else now, where the kept counts answer it, where an
    /// instant some period was bought after reads every row as of it), of `product` (nil: all).
    /// Nil for a name that is no count's.
    func subscriptionsLink(_ status: String, product: String?) -> String? {
        SubscriptionList.Counted.status(named: status).map {
            SubscriptionListController.pageLink($0, range: nil, at: figure.atGiven ? figure.at : nil, product: product)
        }
    }

    /// The page's range, grouping, instant and product as query parameters, for links from it.
    var pageQuery: [String] {
        ["from=\(figure.from)", "to=\(figure.to)", "by=\(figure.interval.rawValue)", "at=\(figure.at)"]
            + (figure.product.map { ["product=" + PercentEncoding.encoded($0)] } ?? [])
    }

    /// Every product the store counts, the one asked selected; the first, empty, is all of them.
    private var productOptions: String {
        let products = Set(counts.map(\.productID)).union(figure.product.map { [$0] } ?? []).sorted()
        return "<option value=\"\">all</option>" + products.map {
            "<option\($0 == figure.product ? " selected" : "")>\(Self.escape($0))</option>"
        }.joined()
    }

    private var statusTable: String {
        let statuses = SubscriptionCount.statuses
        let counts = figure.product.map { product in self.counts.filter { $0.productID == product } } ?? self.counts
        var table = "<h2>By status</h2>\n<table id=\"subscriptions\"><tr><th>Product</th>"
            + statuses.map { "<th>\(Self.escape($0.name.replacingOccurrences(of: "_", with: " ")))</th>" }.joined()
            + "<th>entitled</th></tr>\n"
        let products = Set(counts.map(\.productID)).sorted()
        // A row per product, then the totals' (nil: the page's product, or all).
        let rows = products.map { product in (product, Optional(product), counts.filter { $0.productID == product }) }
            + [("All", nil, counts)]
        for (label, product, rows) in rows {
            // Each count links the subscriptions it counts (SubscriptionListController); a product
            // without an id cannot be asked for, so its counts link nothing.
            let link = { (name: String, count: Int64) in
                guard product != "", let href = subscriptionsLink(name, product: product ?? figure.product) else {
                    return Self.cell(name, count)
                }
                return Self.linkedCell(name, count, to: href)
            }
            table += "<tr data-product=\"\(Self.escape(product ?? ""))\"><td>\(Self.escape(label))</td>"
                + zip(SubscriptionCount.figureNames, SubscriptionCount.figures(rows)).map(link).joined() + "</tr>\n"
        }
        return table + "</table>\n"
    }

    private var mrrTable: String {
        var table = "<h2>Monthly recurring revenue</h2>\n<table id=\"mrr\"><tr><th>Currency</th><th>MRR</th><th>active</th></tr>\n"
        // At the page's instant when it was asked for one, else now (as the table of statuses links).
        let at = figure.atGiven ? figure.at : nil
        for line in mrr.lines {
            table += "<tr data-currency=\"\(Self.escape(line.currency))\"><td>\(Self.escape(line.currency))</td>"
                + mrrCells(line, at: at) + "</tr>\n"
        }
        table += "</table>\n"
        if mrr.unclassified > 0 {
            table += "<p><span data-figure=\"unclassified\" data-value=\"\(mrr.unclassified)\">\(mrr.unclassified)</span> active "
                + "subscriptions have periods of no plan's length (Sandbox) and bring no revenue here.</p>\n"
        }
        return table
    }

    /// The chart (new, renewals, churned per interval, as bars) and the table of every flow.
    private var flowsSection: String {
        let chart = DashboardChart(id: "flows-chart", unit: "subscriptions", instants: flows.map(\.startMilliseconds),
                                   xTitle: "\(figure.interval.rawValue) starting (UTC)", interval: figure.interval, series: [
            .init(name: "new", color: "#3b7dd8", values: flows.map(\.began.new)),
            .init(name: "renewals", color: "#34a853", values: flows.map(\.began.renewals)),
            .init(name: "churned", color: "#d93025", values: flows.map {
                $0.churnedVoluntary.clampedAdding($0.churnedBilling).clampedAdding($0.churnedOther)
            }),
        ])
        let heading = "<h2>Flows by \(figure.interval.rawValue)</h2>\n" + chart.svg
        var table = "<table id=\"flows\"><tr><th>From</th>"
            + (flows.first?.beganFigures ?? []).map { "<th>\($0.name.replacingOccurrences(of: "_", with: " "))</th>" }.joined()
            + "<th>refunds</th>" + (flows.first?.churnedFigures ?? []).map { "<th>churned, \($0.name)</th>" }.joined() + "</tr>\n"
        for flow in flows {
            table += "<tr data-start=\"\(flow.startMilliseconds)\"><td>\(Self.date(flow.startMilliseconds))</td>"
                + flow.beganFigures.map { beganCell($0.name, $0.value, intervalStart: flow.startMilliseconds) }.joined()
                + periodsCell("refunds", flow.refundCount, listing: .refunds(.all), intervalStart: flow.startMilliseconds)
                + flow.churnedFigures.map { churnedCell($0.name, $0.value, intervalStart: flow.startMilliseconds) }.joined()
                + "</tr>\n"
        }
        return heading + table + "</table>\n"
    }

    /// Each interval's money per currency (`GET /v1/stats/revenue`): a row per interval and
    /// currency something happened in, keyed `start_ms/currency`, each figure but the net linking
    /// the periods it counts or adds the money of (SubscriptionList.Counted.revenue).
    private var revenueTable: String {
        var table = "<h2>Revenue</h2>\n<table id=\"revenue\"><tr><th>From</th><th>Currency</th><th>gross</th>"
            + "<th>refunded</th><th>net</th><th>periods</th><th>refunds</th></tr>\n"
        for interval in revenue {
            for line in interval.currencies {
                table += "<tr data-line=\"\(interval.startMilliseconds)/\(Self.escape(line.currency))\">"
                    + "<td>\(Self.date(interval.startMilliseconds))</td><td>\(Self.escape(line.currency))</td>"
                    + zip(IntervalRevenue.Line.figureNames, line.figures).map { name, value in
                        periodsCell(name, value, shown: name.hasSuffix("_milliunits") ? Self.money(value, line.currency) : nil,
                                    listing: SubscriptionList.Counted.revenue(figureNamed: name, currency: line.currency),
                                    intervalStart: interval.startMilliseconds)
                    }.joined() + "</tr>\n"
            }
        }
        return table + "</table>\n"
    }

    /// Each interval's rates (`GET /v1/stats/rates`) as percentages, `data-value` the JSON's decimal
    /// (empty, and a dash shown, where it is null), each beside its counts, which link the periods they count.
    private var ratesTable: String {
        var table = "<h2>Rates</h2>\n<table id=\"rates\"><tr><th>From</th>"
            + IntervalRates.rates.map { "<th>\($0.name.replacingOccurrences(of: "_", with: " "))</th>" }.joined() + "</tr>\n"
        for interval in rates {
            table += "<tr data-start=\"\(interval.startMilliseconds)\"><td>\(Self.date(interval.startMilliseconds))</td>"
            for (rate, (name, value)) in zip(IntervalRates.rates, interval.rateFigures) {
                let counts = [rate.numerator, rate.denominator].map { place in
                    countLink(IntervalRates.countNames[place], interval.counts[place], intervalStart: interval.startMilliseconds)
                }
                table += Self.rateCell(name, value, interval.counts[rate.numerator], of: interval.counts[rate.denominator],
                                       shown: (counts[0], counts[1]))
            }
            table += "</tr>\n"
        }
        return table + "</table>\n"
    }

    /// The churn per interval: the subscriptions active at its start, those that churned in it by
    /// reason, and the rates over the first (IntervalChurn).
    private var churnTable: String {
        var table = "<h2>Churn</h2>\n<table id=\"churn\"><tr><th>From</th>"
            + (IntervalChurn.countNames + IntervalChurn.rates.map(\.name)).map {
                "<th>\($0.replacingOccurrences(of: "_", with: " "))</th>"
            }.joined() + "</tr>\n"
        for interval in churn {
            table += "<tr data-start=\"\(interval.startMilliseconds)\"><td>\(Self.date(interval.startMilliseconds))</td>"
                + zip(IntervalChurn.countNames, interval.counts).map { name, count in
                    name.hasPrefix(Self.churnedPrefix)
                        ? churnedCell(String(name.dropFirst(Self.churnedPrefix.count)), count, intervalStart: interval.startMilliseconds)
                        : activeCell(name, count, at: interval.startMilliseconds)
                }.joined()
            for (rate, (name, value)) in zip(IntervalChurn.rates, interval.rateFigures) {
                table += Self.rateCell(name, value, interval.churned(rate.churned), of: interval.counts[0])
            }
            table += "</tr>\n"
        }
        return table + "</table>\n"
    }

    /// What stood at each interval's end (IntervalActive): the active, trials and paid; then MRR
    /// and ARR per interval and currency, and a chart of MRR for each currency (amounts of two
    /// currencies are never added or drawn on one axis).
    private var activeTable: String {
        // Each bar stands for the midnight its interval is read at (its end, or today's).
        let chart = DashboardChart(id: "active-chart", unit: "subscriptions", instants: active.map(\.atMilliseconds),
                                   xTitle: "at each \(figure.interval.rawValue)'s end (UTC)", interval: figure.interval, series: [
            .init(name: "paid", color: "#3b7dd8", values: active.map(\.paid)),
            .init(name: "trials", color: "#f9ab00", values: active.map(\.trials)),
        ])
        var table = "<h2>Active at each \(figure.interval.rawValue)'s end</h2>\n" + chart.svg
            + "<table id=\"active\"><tr><th>From</th><th>At</th>"
            + IntervalActive.countNames.map { "<th>\($0.replacingOccurrences(of: "_", with: " "))</th>" }.joined() + "</tr>\n"
        for interval in active {
            table += "<tr data-start=\"\(interval.startMilliseconds)\"><td>\(Self.date(interval.startMilliseconds))</td>"
                + Self.cell("at_ms", interval.atMilliseconds, shown: Self.date(interval.atMilliseconds))
                + zip(IntervalActive.countNames, interval.counts).map { name, count in
                    // What stood at the midnight the interval is read at: its active, trials and paid.
                    activeCell(name, count, at: interval.atMilliseconds)
                }.joined() + "</tr>\n"
        }
        table += "</table>\n<table id=\"active-mrr\"><tr><th>From</th><th>Currency</th><th>MRR</th><th>ARR</th><th>active</th></tr>\n"
        for interval in active {
            for line in interval.mrr {
                table += "<tr data-line=\"\(interval.startMilliseconds)/\(Self.escape(line.currency))\">"
                    + "<td>\(Self.date(interval.startMilliseconds))</td><td>\(Self.escape(line.currency))</td>"
                    + mrrCells(line, arr: true, at: interval.atMilliseconds) + "</tr>\n"
            }
        }
        table += "</table>\n"
        let currencies = Set(active.flatMap { $0.mrr.map(\.currency) }).sorted()
        for (number, currency) in currencies.enumerated() {
            let mrr = active.map { interval in interval.mrr.first { $0.currency == currency }?.milliunits ?? 0 }
            table += DashboardChart(id: "mrr-chart-\(number + 1)", unit: "MRR (\(Self.escape(currency)))", instants: active.map(\.atMilliseconds),
                                    xTitle: "at each \(figure.interval.rawValue)'s end (UTC)", interval: figure.interval,
                                    series: [.init(name: "MRR in \(Self.escape(currency))", color: "#188038", values: mrr)],
                                    label: { Self.money($0, currency) }).svg
        }
        return table
    }

    /// How MRR moved in each interval (IntervalMRRMovement), per currency, over all products: each
    /// move's amount and count, the amount linking the moves it adds up (from the interval's start to
    /// the midnight it is read at, which a list of moves takes as its range), and the net.
    private var movementTable: String {
        var table = "<h2>MRR movement by \(figure.interval.rawValue), all products</h2>\n<table id=\"mrr-movement\"><tr><th>From</th>"
            + "<th>Currency</th>" + IntervalMRRMovement.amountNames.map { "<th>\($0.replacingOccurrences(of: "_milliunits", with: ""))</th>" }.joined()
            + "</tr>\n"
        for interval in movement {
            for line in interval.currencies {
                table += "<tr data-line=\"\(interval.startMilliseconds)/\(Self.escape(line.currency))\">"
                    + "<td>\(Self.date(interval.startMilliseconds))</td><td>\(Self.escape(line.currency))</td>"
                    + line.amounts.enumerated().map { place, amount in
                        let shown = Self.money(amount.milliunits, line.currency)
                        guard place < line.counts.count else { return Self.cell(amount.name, amount.milliunits, shown: shown) }
                        let moves = SubscriptionList.Currencies(currency: line.currency).flatMap { currencies in
                            interval.startMilliseconds < interval.atMilliseconds
                                ? listLink(.moved(MRRMove.allCases[place], currencies),
                                           range: (interval.startMilliseconds, interval.atMilliseconds), at: nil) : nil
                        }
                        return "<td data-figure=\"\(amount.name)\" data-value=\"\(amount.milliunits)\" title=\"\(line.counts[place]) moves\">"
                            + (moves.map { Self.link($0, shown) } ?? shown) + "</td>"
                    }.joined() + "</tr>\n"
            }
        }
        return table + "</table>\n"
    }

    /// An MRR line's cells (its MRR, with `arr` its ARR, and its subscriptions), each linking the
    /// subscriptions the line counts and makes its MRR of (`mrr=CURRENCY`) at `instant` (nil: now);
    /// a currency the API cannot name, or an instant no list takes, links nothing.
    private func mrrCells(_ line: MRRLine, arr: Bool = false, at instant: Int64?) -> String {
        let amounts = [("mrr_milliunits", line.milliunits)] + (arr ? [("arr_milliunits", IntervalActive.arr(line))] : [])
        let cells = amounts.map { ($0.0, $0.1, Self.money($0.1, line.currency)) } + [("subscriptions", line.subscriptions, String(line.subscriptions))]
        guard let currencies = SubscriptionList.Currencies(currency: line.currency),
              let href = listLink(.mrr(currencies), range: nil, at: instant) else {
            return cells.map { Self.cell($0.0, $0.1, shown: $0.2) }.joined()
        }
        return cells.map { Self.cell($0.0, $0.1, shown: Self.link(href, $0.2)) }.joined()
    }

    /// What the churned counts' names begin with, before the reason (IntervalChurn.countNames).
    private static let churnedPrefix = "churned_"

    /// What the flows and the revenue of the interval that starts at `start` count: the part of the page's range in it.
    private func flowsRange(intervalStart start: Int64) -> (from: Int64, to: Int64) {
        let end = figure.interval.nextFirstDay(after: FigureInterval.day(of: start)) * FigureInterval.dayMilliseconds
        return (max(figure.from, start), min(figure.to, end))
    }

    /// A churned count of the interval that starts at `start`, linking the subscriptions it counts:
    /// those expired whose period ended in the interval, within the page's range (as the flows read them).
    private func churnedCell(_ reasonName: String, _ count: Int64, intervalStart start: Int64) -> String {
        // At the page's instant, as the flows judged them (a churned list reads the table at any instant).
        guard let reason = ChurnReason(rawValue: reasonName),
              let href = listLink(.churned(reason), range: flowsRange(intervalStart: start), at: figure.at) else {
            return Self.cell(Self.churnedPrefix + reasonName, count)
        }
        return Self.linkedCell(Self.churnedPrefix + reasonName, count, to: href)
    }

    /// A count of what stood at the midnight `instant` (the active table's `active`, `active_trials`
    /// and `active_paid`, the churn table's `active_at_start`), linking the subscriptions it counts
    /// (SubscriptionList.Counted.active(countNamed:)). A midnight before the earliest instant a list
    /// takes (an interval's start before the page's `from`, which the churn's first interval can have) links nothing.
    private func activeCell(_ name: String, _ count: Int64, at instant: Int64) -> String {
        let countName = name == IntervalChurn.countNames[0] ? IntervalActive.countNames[0] : name
        guard let counted = SubscriptionList.Counted.active(countNamed: countName), let href = midnightLink(counted, at: instant) else {
            return Self.cell(name, count)
        }
        return Self.linkedCell(name, count, to: href)
    }

    /// A count of the periods that began as `name` says in the interval that starts at `start`,
    /// linking the periods it counts.
    private func beganCell(_ name: String, _ count: Int64, intervalStart start: Int64) -> String {
        periodsCell(name, count, listing: SubscriptionList.Began(name: name).map { .began($0) }, intervalStart: start)
    }

    /// A count of periods that began as `name` says (SubscriptionList.Began's names) in the interval
    /// that starts at `start`, linking the periods it counts; the count alone for another name.
    private func countLink(_ name: String, _ count: Int64, intervalStart start: Int64) -> String {
        guard let began = SubscriptionList.Began(name: name), let href = periodsLink(.began(began), intervalStart: start) else {
            return String(count)
        }
        return Self.link(href, String(count))
    }

    /// The page of the periods `counted` lists over the part of the page's range in the interval
    /// that starts at `start` (no instant judges periods); nil for a range no list takes (its start
    /// before FigureInterval.instants, which a page's default `from` can be).
    func periodsLink(_ counted: SubscriptionList.Counted, intervalStart start: Int64) -> String? {
        periodsLink(counted, range: flowsRange(intervalStart: start))
    }

    /// The page of the periods `counted` lists over `range`; nil for a range no list takes.
    func periodsLink(_ counted: SubscriptionList.Counted, range: (from: Int64, to: Int64)) -> String? {
        listLink(counted, range: range, at: nil)
    }

    /// The page of the subscriptions `counted` lists at the midnight `instant`; nil for an instant no list takes.
    func midnightLink(_ counted: SubscriptionList.Counted, at instant: Int64) -> String? {
        listLink(counted, range: nil, at: instant)
    }

    /// The page of what `counted` lists over `range` and at `instant` (SubscriptionListController.pageLink),
    /// of the page's product (when it takes one); nil where the range starts, or the instant is, before FigureInterval.instants
    /// (a page's default `from` can be: 365 days before its `to`), which a list refuses.
    private func listLink(_ counted: SubscriptionList.Counted, range: (from: Int64, to: Int64)?, at instant: Int64?) -> String? {
        guard range.map({ FigureInterval.instants.contains($0.from) }) ?? true, instant.map(FigureInterval.instants.contains) ?? true else {
            return nil
        }
        return SubscriptionListController.pageLink(counted, range: range, at: instant, product: figure.product)
    }

    /// A figure of periods (a count, or their money `shown` so) of the interval that starts at
    /// `start`, linking the periods `counted` lists (`periodsLink`); nil, or a range no list takes, links nothing.
    func periodsCell(_ name: String, _ value: Int64, shown: String? = nil, listing counted: SubscriptionList.Counted?,
                     intervalStart start: Int64) -> String {
        let shown = shown ?? String(value)
        guard let counted, let href = periodsLink(counted, intervalStart: start) else { return Self.cell(name, value, shown: shown) }
        return Self.cell(name, value, shown: Self.link(href, shown))
    }

    /// A rate as a percentage (a dash for none), its counts in its title (`1 of 12`), the percentage
    /// linking `href` when there is one (what its numerator counts), and with `shown` beside it too
    /// (each escaped already, a link to what it counts).
    static func rateCell(_ name: String, _ value: String?, _ numerator: Int64, of denominator: Int64,
                         linking href: String? = nil, shown: (numerator: String, denominator: String)? = nil) -> String {
        let percent = (value.map(IntervalRates.percent) ?? "–")
        let rate = value == nil ? percent : href.map { link($0, percent) } ?? percent
        guard let shown else {
            return "<td data-figure=\"\(name)\" data-value=\"\(value ?? "")\" title=\"\(numerator) of \(denominator)\">\(rate)</td>"
        }
        return "<td title=\"\(numerator) of \(denominator)\"><span data-figure=\"\(name)\" data-value=\"\(value ?? "")\">\(rate)</span> "
            + "(\(shown.numerator) of \(shown.denominator))</td>"
    }

    /// The style the dashboard's pages share.
    static let style = """
        body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; }
        table { border-collapse: collapse; margin: 8px 0 24px; }
        th, td { padding: 4px 10px; border-bottom: 1px solid #ddd; text-align: right; }
        th:first-child, td:first-child { text-align: left; }
        """

    /// The y axis' ticks: 0, then at most five round steps (1, 2 or 5 times a power of ten), the
    /// last at or above `highest` (0 and 1 when nothing is above 0; 0 and `highest` where a step
    /// would pass 64 bits).
    static func ticks(reaching highest: Int64) -> [Int64] {
        var power: Int64 = 1
        while true {
            for factor: Int64 in [1, 2, 5] {
                let (step, overflow) = power.multipliedReportingOverflow(by: factor)
                if overflow { return [0, highest] }
                let (steps, remainder) = highest.quotientAndRemainder(dividingBy: step)
                let count = steps + (remainder > 0 ? 1 : 0)
                if count <= 5 {
                    if count.multipliedReportingOverflow(by: step).overflow { return [0, highest] }
                    return (0...max(1, count)).map { $0 * step }
                }
            }
            let (next, overflow) = power.multipliedReportingOverflow(by: 10)
            if overflow { return [0, highest] }
            power = next
        }
    }

    /// A figure's cell: its number in `data-value`, and as `shown` (escaped already; the number itself by default).
    static func cell(_ figure: String, _ value: Int64, shown: String? = nil) -> String {
        "<td data-figure=\"\(escape(figure))\" data-value=\"\(value)\">\(shown ?? String(value))</td>"
    }

    /// A count's cell whose number links `href` (the page of what it counts).
    static func linkedCell(_ figure: String, _ count: Int64, to href: String) -> String {
        cell(figure, count, shown: link(href, String(count)))
    }

    /// `text` (escaped already) linking `href`.
    static func link(_ href: String, _ text: String) -> String { "<a href=\"\(escape(href))\">\(text)</a>" }

    static func date(_ milliseconds: Int64) -> String { FigureInterval.date(of: milliseconds) }

    /// Milliunits of `currency` as a reader writes them (MoneyText: 4990 in USD is $4.99), escaped.
    static func money(_ milliunits: Int64, _ currency: String) -> String {
        escape(MoneyText.text(milliunits: milliunits, currency: currency))
    }


    static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
