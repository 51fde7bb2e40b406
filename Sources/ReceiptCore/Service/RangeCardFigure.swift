/// What the page's cards show: figures added up over the page's range beside the same over the
/// range before it (as long, ending where it begins), and the change between them. The counts
/// and rates are the rates' (IntervalRates) and the churn's (IntervalChurn), the money the
/// revenue's net per currency (IntervalRevenue), each added up as its counts, never as its
/// quotients; the active subscriptions, trials and MRR, stocks, are set at two instants instead.
public struct RangeCard: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// A whole number; for money, milliunits of the card's currency.
        case count
        /// A decimal of four places (IntervalRates.ratio).
        case ratio
    }

    /// The figure's name in the API (`new_paying`, `trial_conversion_rate`, `net_milliunits`).
    public let name: String
    public let kind: Kind
    /// The currency of a money card, nil for the others.
    public let currency: String?
    /// The range's value and the previous range's, as the API writes them; nil without a denominator.
    public let value: String?
    public let previous: String?

    /// `value` less `previous`, signed (`+3`, `-0.0125`, `+0.0000`); nil where either is nil or
    /// the difference passes 64 bits (in ten-thousandths for a ratio).
    public var change: String? {
        guard let value, let previous, let now = Self.scaled(value, kind), let before = Self.scaled(previous, kind) else {
            return nil
        }
        let (difference, overflow) = now.subtractingReportingOverflow(before)
        guard !overflow else { return nil }
        let sign = difference < 0 ? "-" : "+"
        guard kind == .ratio else { return sign + String(difference.magnitude) }
        let (whole, places) = difference.magnitude.quotientAndRemainder(dividingBy: 10_000)
        return sign + IntervalRates.fourPlaces(whole, Int64(places))
    }

    /// The counts (`new`, `new_paying`) and rates (conversion to paying, trial conversion,
    /// refund) of the rates' days (a day and its counts by IntervalRates.countNames) of each
    /// range, the churn rate of each range's churn (IntervalChurn.over; nil: none), then the net
    /// revenue of each currency either range has money in. First, the subscriptions active at the
    /// page's instant (`activeNow`) against those active at the range's first midnight (`churn`'s);
    /// then the active trials and the MRR per currency at the range's last midnight (`atEnd`: not
    /// after its end) against those at its first (`atStart`), as IntervalActive reads them.
    public static func cards(rates: [(day: Int64, counts: [Int64])], previousRates: [(day: Int64, counts: [Int64])],
                             revenue: [DayRevenue], previousRevenue: [DayRevenue], churn: IntervalChurn?,
                             previousChurn: IntervalChurn?, activeNow: Int64,
                             atEnd: ActiveStanding = ActiveStanding(), atStart: ActiveStanding = ActiveStanding()) -> [RangeCard] {
        let (now, before) = (totals(rates), totals(previousRates))
        // Stocks, not flows: the subscriptions active at the page's instant against those at the
        // range's first midnight, as the churn counts them; the trials and MRR at the range's two ends.
        var cards = [RangeCard(name: "active_subscriptions", kind: .count, currency: nil, value: String(activeNow),
                               previous: churn.map { String($0.counts[0]) }),
                     RangeCard(name: "active_trials", kind: .count, currency: nil, value: String(atEnd.trials),
                               previous: String(atStart.trials))]
        let (mrrEnd, mrrStart) = (mrr(atEnd), mrr(atStart))
        for currency in Set(mrrEnd.keys).union(mrrStart.keys).sorted() {
            cards.append(RangeCard(name: "mrr_milliunits", kind: .count, currency: currency,
                                   value: String(mrrEnd[currency] ?? 0), previous: String(mrrStart[currency] ?? 0)))
        }
        cards += ["new", "new_paying"].map { name in
            let place = IntervalRates.countNames.firstIndex(of: name)!
            return RangeCard(name: name, kind: .count, currency: nil, value: String(now[place]), previous: String(before[place]))
        }
        for rate in IntervalRates.rates where rate.name != "refund_rate" {
            cards.append(ratioCard(rate, now, before))
        }
        // The churn over each range: its churned added up over the subscriptions active at its first midnight.
        let churnRate = { (churn: IntervalChurn?) in churn?.rateFigures.first { $0.name == "churn_rate" }?.value }
        cards.append(RangeCard(name: "churn_rate", kind: .ratio, currency: nil, value: churnRate(churn),
                               previous: churnRate(previousChurn)))
        cards.append(ratioCard(IntervalRates.rates.first { $0.name == "refund_rate" }!, now, before))
        let (netNow, netBefore) = (net(revenue), net(previousRevenue))
        for currency in Set(netNow.keys).union(netBefore.keys).sorted() {
            cards.append(RangeCard(name: "net_milliunits", kind: .count, currency: currency,
                                   value: String(netNow[currency] ?? 0), previous: String(netBefore[currency] ?? 0)))
        }
        return cards
    }

    private static func ratioCard(_ rate: (name: String, numerator: Int, denominator: Int), _ now: [Int64],
                                  _ before: [Int64]) -> RangeCard {
        RangeCard(name: rate.name, kind: .ratio, currency: nil,
                  value: IntervalRates.ratio(now[rate.numerator], over: now[rate.denominator]),
                  previous: IntervalRates.ratio(before[rate.numerator], over: before[rate.denominator]))
    }

    /// The counts of `days` added up (IntervalRates.countNames' order).
    private static func totals(_ days: [(day: Int64, counts: [Int64])]) -> [Int64] {
        var sums = Array(repeating: Int64(0), count: IntervalRates.countNames.count)
        for (_, counts) in days where counts.count == sums.count {
            sums = zip(sums, counts).map { $0.clampedAdding($1) }
        }
        return sums
    }

    /// Per currency, the MRR of what stood (MRRLine).
    private static func mrr(_ standing: ActiveStanding) -> [String: Int64] {
        Dictionary(uniqueKeysWithValues: MRRLine.lines(standing.prices).lines.map { ($0.currency, $0.milliunits) })
    }

    /// Per currency, the prices of the periods that began less the amounts refunded (IntervalRevenue.Line.net).
    private static func net(_ days: [DayRevenue]) -> [String: Int64] {
        Dictionary(uniqueKeysWithValues: IntervalRevenue.Line.sums(days).map { ($0.currency, $0.net) })
    }

    /// A value as a whole number: itself for a count, in ten-thousandths for a ratio; nil past 64 bits.
    private static func scaled(_ text: String, _ kind: Kind) -> Int64? {
        guard kind == .ratio else { return Int64(text) }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[1].count == 4, let whole = Int64(parts[0]), let places = Int64(parts[1]) else { return nil }
        let (scaled, overflow) = whole.multipliedReportingOverflow(by: 10_000)
        guard !overflow else { return nil }
        let (sum, carry) = scaled.addingReportingOverflow(places)
        return carry ? nil : sum
    }
}
