/// What stood at one midnight by ActiveSpans' rule (a past instant judged by the periods bought
/// by then, refunds known now): the subscriptions active, the free trials among them, and the
/// prices of all of them by currency and plan length, which MRR is made of (MRRLine), so that a
/// midnight's MRR is the figure `/v1/stats/mrr?at=` gives for it.
public struct ActiveStanding: Sendable, Equatable {
    public var active: Int64 = 0
    public var trials: Int64 = 0
    /// By currency, then length (Standing.periodMilliseconds), as MRRLine.lines takes them.
    public var prices: [PriceGroup] = []

    public init(active: Int64 = 0, trials: Int64 = 0, prices: [PriceGroup] = []) {
        (self.active, self.trials, self.prices) = (active, trials, prices)
    }
}

/// The active subscriptions, trials and MRR at the end of one interval (RevenueCat's active
/// subscriptions, active trials, MRR and ARR charts, read at the end of each period): at its
/// last midnight, which is the next interval's first, or, for an interval the range's end cuts,
/// the last midnight at or before that end (today's, for a range that ends now).
public struct IntervalActive: Sendable, Equatable {
    /// The counts' names, in the order the answers write them: every active subscription (as
    /// Apple's status `active` counts them), the free trials among them, and the others (paid).
    public static let countNames = ["active", "active_trials", "active_paid"]

    public let startMilliseconds: Int64
    /// The midnight the interval is read at.
    public let atMilliseconds: Int64
    /// By `countNames`.
    public let counts: [Int64]
    /// The free trials among the active, and the others.
    public var trials: Int64 { counts[1] }
    public var paid: Int64 { counts[2] }
    /// MRR per currency (MRRLine); ARR is twelve times it.
    public let mrr: [MRRLine]
    /// Active subscriptions whose standing period has no plan's length: no revenue.
    public let unclassified: Int64

    /// The day (since 1970-01-01 UTC) each interval of `firstDays` is read at, in order: the next
    /// interval's first, but not after the last midnight at or before `to`.
    public static func readDays(intervals firstDays: [Int64], by interval: FigureInterval, to: Int64) -> [Int64] {
        let last = FigureInterval.day(of: to)
        return firstDays.map { min(interval.nextFirstDay(after: $0), last) }
    }

    /// Each interval of `firstDays` from what stood at its read day (`standings`, one per interval, in order).
    public static func make(_ standings: [ActiveStanding], intervals firstDays: [Int64], readDays: [Int64]) -> [IntervalActive] {
        zip(firstDays, zip(readDays, standings)).map { first, read in
            let (day, standing) = read
            let lines = MRRLine.lines(standing.prices)
            return IntervalActive(startMilliseconds: first * FigureInterval.dayMilliseconds,
                                  atMilliseconds: day * FigureInterval.dayMilliseconds,
                                  counts: [standing.active, standing.trials, paid(standing)],
                                  mrr: lines.lines, unclassified: lines.unclassified)
        }
    }

    /// The active less the trials, within 64 bits.
    public static func paid(_ standing: ActiveStanding) -> Int64 {
        let (paid, overflow) = standing.active.subtractingReportingOverflow(standing.trials)
        return overflow ? (standing.trials < 0 ? .max : .min) : paid
    }

    /// A currency's ARR: twelve times its MRR.
    public static func arr(_ line: MRRLine) -> Int64 { line.milliunits.clampedMultiplied(by: 12) }
}
