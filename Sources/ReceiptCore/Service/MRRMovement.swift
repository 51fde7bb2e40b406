/// MRR movement (RevenueCat's chart of that name): how each subscription's monthly recurring
/// revenue changed from one midnight (UTC) to the next, by kind. A subscription's MRR at a
/// midnight is its standing period's price made monthly as MRR makes it (ActiveSpans' rule for
/// what stood, BillingPeriod for the month), none where nothing stands, where the period has no
/// plan's length or where its price is not above 0 (a free trial). Each change is one move:
///
/// - new: from none to some, no paid period of the subscription having ended by the midnight before;
/// - reactivation: from none to some after a paid period of it had ended;
/// - expansion and contraction: from some to more or less in one currency (an upgrade, a price rise);
/// - churned: from some to none (it expired, was refunded, or a period priced 0, a free trial, stands instead).
///
/// A change of currency moves the old amount out as churned and the new in as a reactivation (two
/// moves). A move counts once for each time a subscription makes it.
/// A paid period is one not revoked whose price is above 0. Amounts are kept exact in twelfths of
/// a milliunit (a week's price × 52, a month's × 12 … a year's × 1) and rounded once, where a
/// figure is written, so that the moves of the midnights after one add up to the MRR of the last.
public enum MRRMove: String, Sendable, CaseIterable, Comparable {
    case new, expansion, contraction, churned, reactivation

    public static func < (a: Self, b: Self) -> Bool { allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)! }
}

/// One subscription's move on one day: the midnight that first shows it, in its currency, by
/// `twelfths` of a milliunit a month (above 0 for new, expansion and reactivation, below for the
/// others), and the product of what it moved to (for churned, of what it moved from).
public struct MRRDayMove: Sendable, Hashable {
    public let day: Int64
    public let currency: String
    public let move: MRRMove
    public let twelfths: Int64
    public let product: String

    public init(day: Int64, currency: String, move: MRRMove, twelfths: Int64, product: String = "") {
        (self.day, self.currency, self.move, self.twelfths, self.product) = (day, currency, move, twelfths, product)
    }
}

extension BillingPeriod {
    /// Such periods in a month, in twelfths: a price times this is its monthly worth in twelfths, exactly.
    public var twelfthsPerMonth: Int64 { 12 * perMonth.numerator / perMonth.denominator }
}

public enum MRRMovement {
    /// What a standing period adds to MRR a month, in twelfths of a milliunit of its currency.
    public static func twelfths(of standing: ActiveSpans.Standing) -> Int64 {
        guard standing.price > 0, let plan = standing.plan else { return 0 }
        return standing.price.clampedMultiplied(by: plan.twelfthsPerMonth)
    }

    /// The moves of one subscription on the days from `fromDay` on (nil: every day). `periods` are
    /// those that can stand at the midnight before `fromDay` or later (ending after it) and
    /// `paidEndedBefore` says whether a paid period not among them had ended: a write reads those
    /// two (the periods before stand no more), and its moves from `fromDay` on are the whole history's.
    public static func dayMoves(of periods: [ActiveSpans.Period], fromDay: Int64?, paidEndedBefore: Bool) -> [MRRDayMove] {
        // The value at each midnight, as runs of days: the spans that cover a midnight, each worth its standing's twelfths.
        var runs: [(first: Int64, end: Int64, standing: ActiveSpans.Standing, worth: Int64)] = []
        for span in ActiveSpans.spans(of: periods) where !span.days.isEmpty {
            runs.append((span.days.lowerBound, span.days.upperBound, span.standing, twelfths(of: span.standing)))
        }
        // A paid period had ended by a midnight when the earliest-ending one had.
        let firstPaidEnd = periods.filter { !$0.revoked && ($0.price ?? 0) > 0 }.compactMap(\.expires).min()
        var moves: [MRRDayMove] = []
        var (currency, product, worth) = ("", "", Int64(0))
        /// The value becomes `newWorth` in `standing`'s currency at the midnight of `day`.
        func change(on day: Int64, to standing: ActiveSpans.Standing, _ newWorth: Int64) {
            let newCurrency = standing.currency
            defer { (currency, product, worth) = (newCurrency, standing.product, newWorth) }
            guard fromDay.map({ day >= $0 }) ?? true else { return }
            let paidEnded = paidEndedBefore
                || firstPaidEnd.map { $0 <= (day - 1).clampedMultiplied(by: FigureInterval.dayMilliseconds) } ?? false
            func moved(_ move: MRRMove, in currency: String, _ twelfths: Int64, of product: String) {
                moves.append(MRRDayMove(day: day, currency: currency, move: move, twelfths: twelfths, product: product))
            }
            switch (worth > 0, newWorth > 0) {
            case (false, true): moved(paidEnded ? .reactivation : .new, in: newCurrency, newWorth, of: standing.product)
            case (true, false): moved(.churned, in: currency, -worth, of: product)
            case (true, true) where currency != newCurrency:
                moved(.churned, in: currency, -worth, of: product)
                moved(.reactivation, in: newCurrency, newWorth, of: standing.product)
            case (true, true) where newWorth != worth:  // both above 0: the difference cannot overflow
                moved(newWorth > worth ? .expansion : .contraction, in: currency, newWorth - worth, of: standing.product)
            default: break
            }
        }
        for (index, run) in runs.enumerated() {
            change(on: run.first, to: run.standing, run.worth)
            // Runs do not overlap; the next may begin where this one ends (an upgrade, a price rise).
            if index + 1 == runs.count || runs[index + 1].first != run.end { change(on: run.end, to: run.standing, 0) }
        }
        return moves
    }
}

/// The moves a store counted on one day (its midnight) in one currency, of one kind, added up.
public struct MRRDayTotal: Sendable, Equatable {
    public let day: Int64
    public let currency: String
    public let move: MRRMove
    public let subscriptions: Int64
    public let twelfths: Int64

    public init(day: Int64, currency: String, move: MRRMove, subscriptions: Int64, twelfths: Int64) {
        (self.day, self.currency, self.move, self.subscriptions, self.twelfths) = (day, currency, move, subscriptions, twelfths)
    }
}

/// The MRR movement of one interval, from its first midnight to the midnight it is read at
/// (IntervalActive.readDays: its end, or the last midnight at or before the range's end), per
/// currency: the moves the midnights after the first show, up to that one. So the MRR at the
/// interval's first midnight plus its `net` is the MRR at `at`, within the rounding of each figure.
public struct IntervalMRRMovement: Sendable, Equatable {
    /// One currency's moves: how many of each kind, and their amounts in twelfths of a milliunit.
    public struct Line: Sendable, Equatable {
        public let currency: String
        /// By MRRMove.allCases.
        public let counts: [Int64]
        public let twelfths: [Int64]

        /// Each kind's amount in milliunits, then the net (by `amountNames`), each rounded once.
        public var amounts: [(name: String, milliunits: Int64)] {
            let sums = twelfths + [twelfths.reduce(0) { $0.clampedAdding($1) }]
            return zip(IntervalMRRMovement.amountNames, sums.map(IntervalMRRMovement.milliunits)).map { ($0, $1) }
        }
    }

    /// The names of a line's counts (how many moves of each kind), in order.
    public static let countNames = MRRMove.allCases.map(\.rawValue)
    /// The names of a line's amounts, in order: each kind's, then the net.
    public static let amountNames = MRRMove.allCases.map { $0.rawValue + "_milliunits" } + ["net_milliunits"]

    public let startMilliseconds: Int64
    public let atMilliseconds: Int64
    public let currencies: [Line]

    /// Twelfths of a milliunit in milliunits, rounded half away from zero (MRR's amounts, all above
    /// 0, round half up, which is the same for them).
    public static func milliunits(_ twelfths: Int64) -> Int64 {
        let (whole, rest) = twelfths.quotientAndRemainder(dividingBy: 12)
        return rest >= 6 ? whole + 1 : rest <= -6 ? whole - 1 : whole
    }

    /// Each interval of `firstDays`, read at `readDays` (one per interval): the day totals whose
    /// midnight is after its first and not after its read day.
    public static func make(_ totals: [MRRDayTotal], intervals firstDays: [Int64], readDays: [Int64]) -> [IntervalMRRMovement] {
        zip(firstDays, readDays).map { first, read in
            var sums: [String: (counts: [Int64], twelfths: [Int64])] = [:]
            let zero = Array(repeating: Int64(0), count: MRRMove.allCases.count)
            for total in totals where total.day > first && total.day <= read && (total.subscriptions != 0 || total.twelfths != 0) {
                let place = MRRMove.allCases.firstIndex(of: total.move)!
                var line = sums[total.currency] ?? (zero, zero)
                line.counts[place] = line.counts[place].clampedAdding(total.subscriptions)
                line.twelfths[place] = line.twelfths[place].clampedAdding(total.twelfths)
                sums[total.currency] = line
            }
            return IntervalMRRMovement(startMilliseconds: first * FigureInterval.dayMilliseconds,
                                       atMilliseconds: read * FigureInterval.dayMilliseconds,
                                       currencies: sums.sorted { $0.key < $1.key }.map {
                                           Line(currency: $0.key, counts: $0.value.counts, twelfths: $0.value.twelfths)
                                       })
        }
    }
}
