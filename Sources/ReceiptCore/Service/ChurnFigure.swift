/// The churn of one interval: the subscriptions active at its first midnight (ActiveSpans'
/// rule for a past instant: the periods bought by then, refunds known now), and those that
/// churned in it (the flows' churned: expired now, their standing period having ended in the
/// interval), by reason. Each rate a count over another, both given, as IntervalRates gives them:
///
/// - churn rate: every churned subscription over `active_at_start`;
/// - voluntary churn rate: those the customer cancelled (Apple's expirationIntent 1);
/// - billing churn rate: those lost to a billing error (expirationIntent 2).
///
/// A subscription that began in the interval and churned in it is churned but was not active at
/// its start, so a rate can pass 1.
public struct IntervalChurn: Sendable, Equatable {
    /// The counts' names, in the order the answers write them.
    public static let countNames = ["active_at_start"] + IntervalFlows.churnedNames.map { "churned_" + $0 }
    /// Each rate's name and the places in `countNames` of the counts it adds up over `active_at_start` (place 0).
    public static let rates: [(name: String, churned: [Int])] = [
        ("churn_rate", IntervalFlows.churnedNames), ("voluntary_churn_rate", ["voluntary"]), ("billing_churn_rate", ["billing"]),
    ].map { name, reasons in (name, reasons.map { countNames.firstIndex(of: "churned_" + $0)! }) }

    public let startMilliseconds: Int64
    /// By `countNames`.
    public let counts: [Int64]

    /// Each rate by name: its decimal (IntervalRates.ratio), nil where nothing was active at the start.
    public var rateFigures: [(name: String, value: String?)] {
        Self.rates.map { rate in
            (rate.name, IntervalRates.ratio(rate.churned.reduce(0) { $0.clampedAdding(counts[$1]) }, over: counts[0]))
        }
    }

    public init(startMilliseconds: Int64, counts: [Int64]) {
        (self.startMilliseconds, self.counts) = (startMilliseconds, counts)
    }

    /// Every interval of `firstDays` (FigureInterval.intervals): the churned of the flows' `days` it
    /// holds, and the subscriptions active at its start (`activeAtStart`, one per interval, in order).
    public static func make(_ days: [DayFlows], activeAtStart: [Int64], intervals firstDays: [Int64],
                            by interval: FigureInterval) -> [IntervalChurn] {
        zip(IntervalFlows.make(days, intervals: firstDays, by: interval), activeAtStart).map { flows, active in
            IntervalChurn(startMilliseconds: flows.startMilliseconds, counts: [active] + flows.churnedFigures.map(\.value))
        }
    }

    /// Several intervals as one: their churned added up over the subscriptions active at the
    /// first one's start (how a range's churn is told); nil for none.
    public static func over(_ intervals: [IntervalChurn]) -> IntervalChurn? {
        guard let first = intervals.first else { return nil }
        let churned = (1..<countNames.count).map { place in intervals.reduce(Int64(0)) { $0.clampedAdding($1.counts[place]) } }
        return IntervalChurn(startMilliseconds: first.startMilliseconds, counts: [first.counts[0]] + churned)
    }
}
