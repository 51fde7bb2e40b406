/// One cohort: the paying subscriptions whose first paid period (IntervalRates' `new_paying`: a
/// subscription's first period when paid, or its second when paid after a free trial) was bought
/// in the interval, followed through the periods they bought after it (refunds known now).
///
/// - retention: `retained[n - 1]` of the `subscriptions` continued for at least n periods after
///   the first paid one, each a renewal or a recovery (a period bought again after the previous
///   one ended and not by renewal, a reactivation, ends the run); as a share, `retention`;
/// - realized revenue, per currency: what the cohort's subscriptions paid in it so far (every
///   auto-renewable period's `price`, less what was refunded of it), and per paying subscription
///   (over the cohort's subscriptions whose first paid period was in that currency).
public struct IntervalCohort: Sendable, Equatable {
    /// How many periods after the first paid one an answer follows, unless asked (`periods`), and at most.
    public static let defaultPeriods = 12
    public static let maxPeriods = 120

    /// The subscriptions of one day's first paid periods in one currency that continued for the
    /// same number of periods, as a store counts them.
    public struct FirstPaidDay: Sendable, Equatable {
        public let day: Int64
        public let currency: String
        public let continued: Int64
        public let subscriptions: Int64

        public init(day: Int64, currency: String, continued: Int64, subscriptions: Int64) {
            (self.day, self.currency, self.continued, self.subscriptions) = (day, currency, continued, subscriptions)
        }

        /// Retained at `periods` (`retained[periods - 1]`, a list's `retained=`): continued for at least so many.
        public func continued(atLeast periods: Int) -> Bool { continued >= Int64(periods) }
    }

    /// What the subscriptions whose first paid period was bought on `day` paid in `currency`, less
    /// refunds, and for how many periods (which a list of them counts).
    public struct RevenueDay: Sendable, Equatable {
        public let day: Int64
        public let currency: String
        public let net: Int64
        public let periods: Int64

        public init(day: Int64, currency: String, net: Int64, periods: Int64) {
            (self.day, self.currency, self.net, self.periods) = (day, currency, net, periods)
        }
    }

    public struct Line: Sendable, Equatable {
        public let currency: String
        /// The cohort's subscriptions whose first paid period was in this currency.
        public let paying: Int64
        /// What the cohort's subscriptions paid in this currency, less refunds.
        public let net: Int64

        /// `net` per paying subscription in milliunits, rounded half away from zero; nil without one.
        public var perPaying: Int64? { IntervalCohort.roundedQuotient(net, over: paying) }
    }

    public let startMilliseconds: Int64
    public let subscriptions: Int64
    /// By the number of periods after the first paid one, from 1.
    public let retained: [Int64]
    /// The currencies the cohort bought or paid in, by currency code.
    public let currencies: [Line]

    /// Each of `retained` as a share of `subscriptions` (IntervalRates.ratio), nil without a subscription.
    public var retention: [String?] { retained.map { IntervalRates.ratio($0, over: subscriptions) } }

    /// Every interval of `firstDays` (FigureInterval.intervals), with the cohorts of the days it
    /// holds, followed for `periods` periods (1 ... maxPeriods).
    public static func make(_ firstPaid: [FirstPaidDay], revenue: [RevenueDay], intervals firstDays: [Int64],
                            by interval: FigureInterval, periods: Int) -> [IntervalCohort] {
        let periods = followed(periods)
        var sizes: [Int64: Int64] = [:]
        var retained: [Int64: [Int64]] = [:]
        var lines: [Int64: [String: (paying: Int64, net: Int64)]] = [:]
        for cohort in firstPaid where cohort.subscriptions > 0 {
            let first = interval.firstDay(holding: cohort.day)
            sizes[first] = (sizes[first] ?? 0).clampedAdding(cohort.subscriptions)
            var counts = retained[first] ?? Array(repeating: 0, count: periods)
            for after in 0..<periods where cohort.continued(atLeast: after + 1) {
                counts[after] = counts[after].clampedAdding(cohort.subscriptions)
            }
            retained[first] = counts
            let held = lines[first]?[cohort.currency] ?? (0, 0)
            lines[first, default: [:]][cohort.currency] = (held.paying.clampedAdding(cohort.subscriptions), held.net)
        }
        for day in revenue {
            let first = interval.firstDay(holding: day.day)
            let held = lines[first]?[day.currency] ?? (0, 0)
            lines[first, default: [:]][day.currency] = (held.paying, held.net.clampedAdding(day.net))
        }
        return firstDays.map { first in
            IntervalCohort(startMilliseconds: first * FigureInterval.dayMilliseconds, subscriptions: sizes[first] ?? 0,
                           retained: retained[first] ?? Array(repeating: 0, count: periods),
                           currencies: (lines[first] ?? [:]).map { Line(currency: $0.key, paying: $0.value.paying, net: $0.value.net) }
                               .sorted { $0.currency < $1.currency })
        }
    }

    /// A number of periods as a query names it (`periods`, a list's `retained`): 1 to 3 digits
    /// within 1 ... maxPeriods; nil for anything else (a sign, a fraction, a larger number).
    public static func periods(named text: String) -> Int? {
        guard (1...3).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let periods = Int(text),
              (1...maxPeriods).contains(periods) else { return nil }
        return periods
    }

    /// How many periods an answer asked to follow `periods` follows: 1 ... maxPeriods.
    public static func followed(_ periods: Int) -> Int { min(max(periods, 1), maxPeriods) }

    /// `numerator` / `denominator` rounded to the nearest whole, halves away from zero; nil when
    /// the denominator is not above 0. No step can overflow (the remainder is compared, not doubled).
    public static func roundedQuotient(_ numerator: Int64, over denominator: Int64) -> Int64? {
        guard denominator > 0 else { return nil }
        let (quotient, remainder) = numerator.quotientAndRemainder(dividingBy: denominator)
        // |remainder| < denominator, so the quotient is a step away from any bound it could pass.
        if remainder > 0, remainder >= denominator - remainder { return quotient + 1 }
        if remainder < 0, -remainder >= denominator + remainder { return quotient - 1 }
        return quotient
    }
}
