/// The store's figures as `receipt serve` answers `GET /v1/stats/…` (README defines each).
public enum StatsJSON {
    /// `{"at_ms", "total": {status name: count…, "entitled"}, "by_product": [{"product_id", …}]}`:
    /// every status named, 0 where none; `entitled` is active plus grace period.
    /// Each answer names the `product_id` its figures were limited to, when they were.
    public static func subscriptions(_ counts: [SubscriptionCount], at instant: Int64, product: String? = nil) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.number("at_ms", instant)
        writeProduct(product, into: &writer)
        writer.beginObject("total")
        write(counts, into: &writer)
        writer.endObject()
        writer.beginArray("by_product")
        for product in Set(counts.map(\.productID)).sorted() {
            writer.beginObject()
            writer.string("product_id", product)
            write(counts.filter { $0.productID == product }, into: &writer)
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        return writer.bytes
    }

    private static func writeProduct(_ product: String?, into writer: inout JSONWriter) {
        if let product { writer.string("product_id", product) }
    }

    private static func write(_ counts: [SubscriptionCount], into writer: inout JSONWriter) {
        for (name, value) in zip(SubscriptionCount.figureNames, SubscriptionCount.figures(counts)) { writer.number(name, value) }
    }

    /// `{"at_ms", "currencies": [{"currency", "mrr_milliunits", "subscriptions", "by_period": {period: count}}],
    /// "unclassified": {"subscriptions", "currencies": [...]}}` (MRRLine).
    public static func mrr(_ groups: [PriceGroup], at instant: Int64, product: String? = nil) -> [UInt8] {
        let (lines, unclassified, unclassifiedCurrencies) = MRRLine.lines(groups)
        var writer = JSONWriter()
        writer.beginObject()
        writer.number("at_ms", instant)
        writeProduct(product, into: &writer)
        writer.beginArray("currencies")
        for line in lines {
            writer.beginObject()
            writer.string("currency", line.currency)
            writer.number("mrr_milliunits", line.milliunits)
            writer.number("subscriptions", line.subscriptions)
            writer.beginObject("by_period")
            for (period, count) in line.periods { writer.number(period.rawValue, count) }
            writer.endObject()
            writer.endObject()
        }
        writer.endArray()
        writer.beginObject("unclassified")
        writer.number("subscriptions", unclassified)
        writer.beginArray("currencies")
        for currency in unclassifiedCurrencies { writer.string(nil, currency) }
        writer.endArray()
        writer.endObject()
        writer.endObject()
        return writer.bytes
    }

    /// `{"from_ms", "to_ms", "by", "at_ms", "intervals": [{"start_ms", "new", "trial_starts",
    /// "renewals", "trial_conversions", "recoveries", "reactivations", "refunds": {"count",
    /// "amounts": [{"currency", "milliunits"}]}, "churned": {"voluntary", "billing", "other"}}]}`
    /// (IntervalFlows): every interval that meets [from, to), zeros where nothing happened.
    public static func flows(_ intervals: [IntervalFlows], by interval: FigureInterval, from: Int64, to: Int64,
                             at instant: Int64, product: String? = nil) -> [UInt8] {
        ranged(intervals, by: interval, from: from, to: to, at: instant, product: product,
               start: \.startMilliseconds) { flows, writer in
            for (name, value) in flows.beganFigures { writer.number(name, value) }
            writer.beginObject("refunds")
            writer.number("count", flows.refundCount)
            writer.beginArray("amounts")
            for (currency, milliunits) in flows.refundAmounts {
                writer.beginObject()
                writer.string("currency", currency)
                writer.number("milliunits", milliunits)
                writer.endObject()
            }
            writer.endArray()
            writer.endObject()
            writer.beginObject("churned")
            for (name, value) in flows.churnedFigures { writer.number(name, value) }
            writer.endObject()
        }
    }

    /// `{"from_ms", "to_ms", "by", "intervals": [{"start_ms", "currencies": [{"currency",
    /// "gross_milliunits", "refunded_milliunits", "net_milliunits", "periods", "refunds"}]}]}`
    /// (IntervalRevenue): every interval that meets [from, to), each currency something happened in.
    public static func revenue(_ intervals: [IntervalRevenue], by interval: FigureInterval, from: Int64, to: Int64,
                               product: String? = nil) -> [UInt8] {
        ranged(intervals, by: interval, from: from, to: to, product: product, start: \.startMilliseconds) { revenue, writer in
            writer.beginArray("currencies")
            for line in revenue.currencies {
                writer.beginObject()
                writer.string("currency", line.currency)
                for (name, value) in zip(IntervalRevenue.Line.figureNames, line.figures) { writer.number(name, value) }
                writer.endObject()
            }
            writer.endArray()
        }
    }

    /// `{"from_ms", "to_ms", "by", "intervals": [{"start_ms", "paid_periods", "refunded_paid_periods",
    /// "new", "new_paying", "trial_starts", "converted_trials", "refund_rate", "conversion_to_paying",
    /// "trial_conversion_rate"}]}` (IntervalRates): every interval that meets [from, to), each rate a
    /// decimal of four places, null where its denominator counts nothing.
    public static func rates(_ intervals: [IntervalRates], by interval: FigureInterval, from: Int64, to: Int64,
                             product: String? = nil) -> [UInt8] {
        ranged(intervals, by: interval, from: from, to: to, product: product, start: \.startMilliseconds) { rates, writer in
            writeCounts(zip(IntervalRates.countNames, rates.counts), rates: rates.rateFigures, into: &writer)
        }
    }

    /// `{"from_ms", "to_ms", "by", "at_ms", "intervals": [{"start_ms", "active_at_start", "churned_voluntary",
    /// "churned_billing", "churned_other", "churn_rate", "voluntary_churn_rate", "billing_churn_rate"}]}`
    /// (IntervalChurn; a rate `null` where nothing was active at the start): every interval that meets
    /// [from, to), its churned judged at `instant`.
    public static func churn(_ intervals: [IntervalChurn], by interval: FigureInterval, from: Int64, to: Int64, at instant: Int64,
                             product: String? = nil) -> [UInt8] {
        ranged(intervals, by: interval, from: from, to: to, at: instant, product: product,
               start: \.startMilliseconds) { churn, writer in
            writeCounts(zip(IntervalChurn.countNames, churn.counts), rates: churn.rateFigures, into: &writer)
        }
    }

    /// `{"from_ms", "to_ms", "by", "intervals": [{"start_ms", "at_ms", "active", "active_trials",
    /// "active_paid", "currencies": [{"currency", "mrr_milliunits", "arr_milliunits", "subscriptions"}],
    /// "unclassified"}]}` (IntervalActive): every interval that meets [from, to), read at its last
    /// midnight not after `to`; each currency of its active subscriptions.
    public static func active(_ intervals: [IntervalActive], by interval: FigureInterval, from: Int64, to: Int64,
                              product: String? = nil) -> [UInt8] {
        ranged(intervals, by: interval, from: from, to: to, product: product, start: \.startMilliseconds) { active, writer in
            writer.number("at_ms", active.atMilliseconds)
            for (name, value) in zip(IntervalActive.countNames, active.counts) { writer.number(name, value) }
            writer.beginArray("currencies")
            for line in active.mrr {
                writer.beginObject()
                writer.string("currency", line.currency)
                writer.number("mrr_milliunits", line.milliunits)
                writer.number("arr_milliunits", IntervalActive.arr(line))
                writer.number("subscriptions", line.subscriptions)
                writer.endObject()
            }
            writer.endArray()
            writer.number("unclassified", active.unclassified)
        }
    }

    /// `{"from_ms", "to_ms", "by", "intervals": [{"start_ms", "at_ms", "currencies": [{"currency",
    /// "new_milliunits", "expansion_milliunits", "contraction_milliunits", "churned_milliunits",
    /// "reactivation_milliunits", "net_milliunits", "new", "expansion", "contraction", "churned",
    /// "reactivation"}]}]}` (IntervalMRRMovement): every interval that meets [from, to), each currency that moved in it.
    public static func mrrMovement(_ intervals: [IntervalMRRMovement], by interval: FigureInterval, from: Int64, to: Int64)
        -> [UInt8] {
        ranged(intervals, by: interval, from: from, to: to, product: nil, start: \.startMilliseconds) { movement, writer in
            writer.number("at_ms", movement.atMilliseconds)
            writer.beginArray("currencies")
            for line in movement.currencies {
                writer.beginObject()
                writer.string("currency", line.currency)
                for (name, value) in line.amounts { writer.number(name, value) }
                for (name, value) in zip(IntervalMRRMovement.countNames, line.counts) { writer.number(name, value) }
                writer.endObject()
            }
            writer.endArray()
        }
    }

    /// An interval's counts by name, then its rates (a decimal, or `null` without a denominator).
    private static func writeCounts(_ counts: Zip2Sequence<[String], [Int64]>, rates: [(name: String, value: String?)],
                                    into writer: inout JSONWriter) {
        for (name, value) in counts { writer.number(name, value) }
        for (name, value) in rates {
            if let value { writer.raw(name, Array(value.utf8)) } else { writer.null(name) }
        }
    }

    /// `{"from_ms", "to_ms", "by", "periods", "intervals": [{"start_ms", "subscriptions", "retained":
    /// [n, …], "retention": [0.5000 or null, …], "currencies": [{"currency", "paying",
    /// "net_milliunits", "per_paying_milliunits" or null}]}]}` (IntervalCohort): every interval that
    /// meets [from, to), as the cohort of the first paid periods bought in it.
    public static func cohorts(_ intervals: [IntervalCohort], by interval: FigureInterval, from: Int64, to: Int64,
                               periods: Int, product: String? = nil) -> [UInt8] {
        ranged(intervals, by: interval, from: from, to: to, product: product, periods: IntervalCohort.followed(periods),
               start: \.startMilliseconds) { cohort, writer in
            writer.number("subscriptions", cohort.subscriptions)
            writer.beginArray("retained")
            for count in cohort.retained { writer.number(nil, count) }
            writer.endArray()
            writer.beginArray("retention")
            for share in cohort.retention {
                if let share { writer.raw(nil, Array(share.utf8)) } else { writer.null(nil) }
            }
            writer.endArray()
            writer.beginArray("currencies")
            for line in cohort.currencies {
                writer.beginObject()
                writer.string("currency", line.currency)
                writer.number("paying", line.paying)
                writer.number("net_milliunits", line.net)
                if let perPaying = line.perPaying { writer.number("per_paying_milliunits", perPaying) }
                else { writer.null("per_paying_milliunits") }
                writer.endObject()
            }
            writer.endArray()
        }
    }

    /// A figure over a range: `{"from_ms", "to_ms", "by", ["at_ms",] ["product_id",] "intervals":
    /// [{"start_ms", …}]}`, each interval's members after its start written by `members`.
    private static func ranged<Interval>(_ intervals: [Interval], by interval: FigureInterval, from: Int64, to: Int64,
                                         at instant: Int64? = nil, product: String?, periods: Int? = nil,
                                         start: (Interval) -> Int64,
                                         members: (Interval, inout JSONWriter) -> Void) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.number("from_ms", from)
        writer.number("to_ms", to)
        writer.string("by", interval.rawValue)
        if let instant { writer.number("at_ms", instant) }
        writeProduct(product, into: &writer)
        if let periods { writer.number("periods", Int64(periods)) }
        writer.beginArray("intervals")
        for each in intervals {
            writer.beginObject()
            writer.number("start_ms", start(each))
            members(each, &writer)
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        return writer.bytes
    }
}

extension IntervalFlows {
    /// The names the answers give the periods that began, in order.
    public static let beganNames = ["new", "trial_starts", "renewals", "trial_conversions", "recoveries", "reactivations"]
    /// The names the answers give the reasons of churn, in order.
    public static let churnedNames = ChurnReason.allCases.map(\.rawValue)

    /// The periods that began, by the names the answers give them, in order.
    public var beganFigures: [(name: String, value: Int64)] {
        Array(zip(Self.beganNames, began.counts))
    }

    /// The churned subscriptions by reason, by the names the answers give them.
    public var churnedFigures: [(name: String, value: Int64)] {
        Array(zip(Self.churnedNames, [churnedVoluntary, churnedBilling, churnedOther]))
    }
}
