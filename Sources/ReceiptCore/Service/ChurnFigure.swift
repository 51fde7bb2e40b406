/// The churn of one interval: the subscriptions active at its first midnight (ActiveSpans'
/// rule for a past instant: the periods bought by then, refunds known now), and those that
/// churned in it (the flows' churned: expired at the figure's instant, now by default, their
/// standing period having ended in the interval), by reason. Each rate a count over another, both given, as IntervalRates gives them:
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
        Self.rates.map { rate in (rate.name, IntervalRates.ratio(churned(rate.churned), over: counts[0])) }
    }

    /// The churned counts at `places` (a rate's `churned`) added up: the rate's numerator.
    public func churned(_ places: [Int]) -> Int64 { places.reduce(0) { $0.clampedAdding(counts[$1]) } }

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

    /// A range's churn, as one: the churned of its flows' `days` over the subscriptions active at
    /// its start (`activeAtStart`, at `startMilliseconds`), how the page's card tells it.
    public static func over(_ days: [DayFlows], startMilliseconds: Int64, activeAtStart: Int64) -> IntervalChurn {
        IntervalChurn(startMilliseconds: startMilliseconds, counts: [activeAtStart] + IntervalFlows.churned(on: days))
    }
}
