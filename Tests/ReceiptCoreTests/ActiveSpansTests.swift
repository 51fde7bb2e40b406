import Testing
@testable import ReceiptCore

/// ActiveSpans: the spans agree with the rule at every instant, and the day changes add up to
/// the subscriptions active at each midnight, whole or from a bound.
struct ActiveSpansTests {
    private static let day = FigureInterval.dayMilliseconds
    /// 2026-01-01 00:00 UTC.
    private static let t0: Int64 = 1_767_225_600_000

    private func period(_ id: String, _ product: String, _ purchase: Int64?, _ expires: Int64?, revoked: Bool = false,
                        currency: String = "", price: Int64? = nil, freeTrial: Bool = false) -> ActiveSpans.Period {
        ActiveSpans.Period(transactionID: id, product: product, purchase: purchase, expires: expires, revoked: revoked,
                           currency: currency, price: price, freeTrial: freeTrial)
    }

    /// A span under `product` whose standing periods are of `plan` (no currency, price or trial).
    private func span(_ start: Int64?, _ end: Int64, _ product: String, plan: BillingPeriod?) -> ActiveSpans.Span {
        ActiveSpans.Span(start: start, end: end, standing: ActiveSpans.Standing(product: product, plan: plan))
    }

    /// Monthly renewals, an upgrade in the middle of a period, a lapse, a refunded period and a reactivation.
    @Test func spansFollowTheStandingPeriod() {
        let t0 = Self.t0, day = Self.day
        let periods = [
            period("1", "basic", t0, t0 + 30 * day),
            period("2", "basic", t0 + 30 * day, t0 + 60 * day),
            period("3", "pro", t0 + 45 * day, t0 + 75 * day),  // upgrade: stands from its purchase
            period("4", "pro", t0 + 90 * day, t0 + 120 * day, revoked: true),  // refunded: never active
            period("5", "pro", t0 + 130 * day, t0 + 160 * day),
        ]
        #expect(ActiveSpans.spans(of: periods) == [
            span(t0, t0 + 45 * day, "basic", plan: .month),
            span(t0 + 45 * day, t0 + 75 * day, "pro", plan: .month),
            span(t0 + 130 * day, t0 + 160 * day, "pro", plan: .month),
        ])
        #expect(Self.active(periods, at: t0 + 100 * day) == nil)
        #expect(Self.active(periods, at: t0 + 50 * day)?.product == "pro")
        #expect(Self.active(periods, at: t0 - 1) == nil)
    }

    /// A downgrade bought while a longer period runs does not stand until that one ends: the
    /// later end stands, as SubscriptionState keeps it.
    @Test func theLatestEndStands() {
        let t0 = Self.t0, day = Self.day
        let periods = [period("1", "yearly", t0, t0 + 365 * day), period("2", "monthly", t0 + 10 * day, t0 + 40 * day)]
        #expect(ActiveSpans.spans(of: periods) == [span(t0, t0 + 365 * day, "yearly", plan: .year)])
    }

    /// For random histories, the day changes added up to each midnight equal the rule applied at
    /// it, whole and from any bound on (the midnights before a bound are not counted): one
    /// subscription under the standing period's product, currency, price, length and trial, or none.
    @Test func dayChangesAddUpToTheRuleAtEveryMidnight() {
        var generator = SplitMix(seed: 7)
        let t0 = Self.t0, day = Self.day
        for _ in 0..<300 {
            var periods: [ActiveSpans.Period] = []
            var cursor = t0 + Int64(generator.next(below: 5 * 86_400)) * 1000
            for index in 0..<Int(generator.next(below: 6)) {
                let length = Int64(1 + generator.next(below: 40)) * day / Int64(1 + generator.next(below: 3))
                let gap = Int64(generator.next(below: 4)) == 0 ? Int64(generator.next(below: 20)) * day : -Int64(generator.next(below: 5)) * day
                let product = ["a", "b"][Int(generator.next(below: 2))]
                let purchase: Int64? = generator.next(below: 25) == 0 ? nil : cursor
                let trial = generator.next(below: 4) == 0
                periods.append(period(String(index), product, purchase, cursor + length, revoked: generator.next(below: 6) == 0,
                                      currency: ["USD", "EUR"][Int(generator.next(below: 2))],
                                      price: trial ? 0 : [nil, 990, 1990][Int(generator.next(below: 3))], freeTrial: trial))
                cursor += length + gap
            }
            let firstDay = FigureInterval.day(of: t0)
            for bound in [nil, firstDay + Int64(generator.next(below: 60))] as [Int64?] {
                let changes = ActiveSpans.dayChanges(of: periods, fromDay: bound)
                for midnight in firstDay..<(firstDay + 260) where bound.map({ midnight >= $0 }) ?? true {
                    var counts: [ActiveSpans.Standing: Int64] = [:]
                    for change in changes where change.day <= midnight { counts[change.standing, default: 0] += change.change }
                    let expected = Self.active(periods, at: midnight * day).map { standing in
                        ActiveSpans.Standing(product: standing.product, currency: standing.currency,
                                             plan: Self.plan(of: standing), price: standing.price ?? 0,
                                             freeTrial: standing.freeTrial)
                    }
                    #expect(counts.filter { $0.value != 0 } == (expected.map { [$0: 1] } ?? [:]),
                            "\(periods) at day \(midnight) from \(String(describing: bound))")
                }
            }
        }
    }

    /// What a write reads: the periods that end after its first changed midnight. Their changes
    /// from that day on add up, at every midnight from it, to those of the whole history.
    @Test func thePeriodsEndingAfterTheBoundTellEveryMidnightFromIt() {
        var generator = SplitMix(seed: 11)
        let t0 = Self.t0, day = Self.day
        let firstDay = FigureInterval.day(of: t0)
        for _ in 0..<300 {
            var periods: [ActiveSpans.Period] = []
            var cursor = t0
            for index in 0..<Int(1 + generator.next(below: 8)) {
                let length = Int64(1 + generator.next(below: 60)) * day / 2
                periods.append(period(String(index), ["a", "b"][Int(generator.next(below: 2))], cursor, cursor + length,
                                      revoked: generator.next(below: 8) == 0))
                cursor += length - Int64(generator.next(below: 20)) * day + Int64(generator.next(below: 10)) * day
            }
            let bound = firstDay + Int64(generator.next(below: 120))
            let whole = ActiveSpans.dayChanges(of: periods, fromDay: nil)
            let read = ActiveSpans.dayChanges(of: periods.filter { ($0.expires ?? .min) > bound * day }, fromDay: bound)
            for midnight in bound..<(firstDay + 300) {
                for product in ["a", "b"] {
                    let sum = { (changes: [ActiveSpans.DayChange]) in
                        changes.filter { $0.day <= midnight && $0.product == product }.reduce(0) { $0 + $1.change }
                    }
                    #expect(sum(read) == sum(whole), "\(periods) from \(bound) at \(midnight)")
                }
            }
        }
    }

    /// Signed dates may be any 64-bit number: the days are told without overflow, and a span
    /// from before 1970 or past 9999 counts over every midnight a figure asks of.
    @Test func datesAtTheEndsOf64Bits() {
        let changes = ActiveSpans.dayChanges(of: [period("1", "a", .min, .max)], fromDay: nil)
        #expect(changes.count == 2 && changes[0].day == ActiveSpans.earliestDay && changes[0].change == 1)
        #expect(changes[0].standing == ActiveSpans.Standing(product: "a", plan: nil))
        #expect(changes[1].day > FigureInterval.day(of: FigureInterval.instants.upperBound))
        #expect(ActiveSpans.firstMidnight(atOrAfter: .min) == -1 && ActiveSpans.firstMidnight(atOrAfter: 0) == 0)
        #expect(ActiveSpans.firstMidnight(atOrAfter: 1) == 1 && ActiveSpans.firstMidnight(atOrAfter: -1) == 0)
        #expect(ActiveSpans.dayChanges(of: [period("1", "a", .min, .min + 1)], fromDay: nil).isEmpty)
        // Bought from the start, then at the first millisecond: the later end stands from it; no empty span before.
        #expect(ActiveSpans.spans(of: [period("1", "a", nil, 5), period("2", "b", .min, 10)])
                == [span(.min, 10, "b", plan: nil)])
        // A length no 64-bit difference holds, and one before its purchase, are no plan's; a plan's
        // length as MRRLine takes it tells the same plan again.
        #expect(ActiveSpans.Standing.plan(from: .max, to: .min) == nil && ActiveSpans.Standing.plan(from: 10, to: 5) == nil)
        #expect(ActiveSpans.Standing.plan(from: 0, to: 31 * Self.day) == .month)
        for plan in BillingPeriod.allCases {
            #expect(BillingPeriod.of(milliseconds: ActiveSpans.Standing(product: "a", plan: plan).periodMilliseconds) == plan)
        }
        #expect(ActiveSpans.Standing(product: "a").periodMilliseconds == 0)
    }

    /// A period without a purchase date counts as bought from the start; one without an expiry covers nothing.
    @Test func undatedPeriods() {
        let t0 = Self.t0
        let changes = ActiveSpans.dayChanges(of: [period("1", "a", nil, t0 + 1)], fromDay: nil)
        // Undated: its length runs from the start (MRR reads it so), which no plan has.
        let standing = ActiveSpans.Standing(product: "a", plan: nil)
        #expect(changes == [ActiveSpans.DayChange(day: ActiveSpans.earliestDay, standing: standing, change: 1),
                            ActiveSpans.DayChange(day: FigureInterval.day(of: t0) + 1, standing: standing, change: -1)])
        #expect(ActiveSpans.spans(of: [period("1", "a", t0, nil)]).isEmpty)
        // A span within one day covers no midnight.
        #expect(ActiveSpans.dayChanges(of: [period("1", "a", t0 + 1, t0 + 1000)], fromDay: nil).isEmpty)
    }

    /// Each interval is read at its end, or at the last midnight at or before the range's end; its
    /// MRR is MRRLine's of the prices that stood, ARR twelve times it, and the paid are the active less the trials.
    @Test func activeIsReadAtEachIntervalsEnd() {
        let january = FigureInterval.day(of: Self.t0), february = january + 31, march = february + 28
        let midFebruary = (february + 14) * Self.day + Self.day / 2
        #expect(IntervalActive.readDays(intervals: [january, february], by: .month, to: midFebruary) == [february, february + 14])
        #expect(IntervalActive.readDays(intervals: [january, february], by: .month, to: march * Self.day) == [february, march])
        #expect(IntervalActive.readDays(intervals: [february + 14], by: .day, to: midFebruary) == [february + 14])
        let standing = ActiveStanding(active: 5, trials: 2, prices: [
            PriceGroup(currency: "EUR", periodMilliseconds: 365 * Self.day, subscriptions: 1, priceSum: 59_990),
            PriceGroup(currency: "USD", periodMilliseconds: 30 * Self.day, subscriptions: 3, priceSum: 9_980),
            PriceGroup(currency: "USD", periodMilliseconds: 1000 * Self.day, subscriptions: 1, priceSum: 500),
        ])
        let figure = IntervalActive.make([standing], intervals: [january], readDays: [february])
        #expect(figure.count == 1 && figure[0].counts == [5, 2, 3] && figure[0].unclassified == 1)
        #expect(figure[0].startMilliseconds == january * Self.day && figure[0].atMilliseconds == february * Self.day)
        #expect(figure[0].mrr.map(\.currency) == ["EUR", "USD"] && figure[0].mrr.map(\.milliunits) == [4_999, 9_980])
        #expect(figure[0].mrr.map(IntervalActive.arr) == [59_988, 119_760])
    }

    @Test func churnRatesAreChurnedOverActiveAtTheStart() {
        let churn = IntervalChurn(startMilliseconds: 0, counts: [40, 3, 2, 1])
        #expect(churn.rateFigures.map(\.name) == ["churn_rate", "voluntary_churn_rate", "billing_churn_rate"])
        #expect(churn.rateFigures.map(\.value) == ["0.1500", "0.0750", "0.0500"])
        #expect(IntervalChurn(startMilliseconds: 0, counts: [0, 3, 0, 0]).rateFigures.allSatisfy { $0.value == nil })
        #expect(IntervalChurn.countNames == ["active_at_start", "churned_voluntary", "churned_billing", "churned_other"])
    }
}

/// MRRMovement: a subscription's moves add up, at every midnight, to the MRR its standing period
/// is worth then, each of the right kind, and a write's reading gives the whole history's moves.
extension ActiveSpansTests {
    /// Random histories of monthly, weekly and yearly periods in two currencies, some free trials, some refunded.
    private static func history(_ generator: inout SplitMix) -> [ActiveSpans.Period] {
        let (t0, day) = (Self.t0, Self.day)
        var periods: [ActiveSpans.Period] = []
        var cursor = t0 + Int64(generator.next(below: 86_400)) * 1000
        for index in 0..<Int(1 + generator.next(below: 7)) {
            let length = [7, 30, 31, 365, 3][Int(generator.next(below: 5))] * day
            let gap = generator.next(below: 3) == 0 ? Int64(generator.next(below: 40)) * day : -Int64(generator.next(below: 3)) * day
            let trial = generator.next(below: 5) == 0
            periods.append(ActiveSpans.Period(
                transactionID: String(index), product: ["a", "b"][Int(generator.next(below: 2))], purchase: cursor,
                expires: cursor + length, revoked: generator.next(below: 7) == 0,
                currency: generator.next(below: 6) == 0 ? "EUR" : "USD",
                price: trial ? 0 : [990, 1990, 4990][Int(generator.next(below: 3))], freeTrial: trial))
            cursor += length + gap
        }
        return periods
    }

    /// What a subscription's MRR is worth at `midnight`, by the rule written out apart (twelfths, per currency).
    private static func worth(_ periods: [ActiveSpans.Period], atDay midnight: Int64) -> [String: Int64] {
        guard let standing = active(periods, at: midnight * Self.day), let price = standing.price, price > 0,
              let plan = plan(of: standing) else { return [:] }
        let perMonth: [BillingPeriod: Int64] = [.week: 52, .month: 12, .twoMonths: 6, .threeMonths: 4, .sixMonths: 2, .year: 1]
        return [standing.currency: price * perMonth[plan]!]
    }

    /// Whether a paid period (not revoked, priced above 0) had ended by the midnight of `day`.
    private static func paidEnded(_ periods: [ActiveSpans.Period], by day: Int64) -> Bool {
        periods.contains { !$0.revoked && ($0.price ?? 0) > 0 && $0.expires! <= day * Self.day }
    }

    @Test func movesAddUpToTheMRRAtEveryMidnight() {
        var generator = SplitMix(seed: 13)
        let firstDay = FigureInterval.day(of: Self.t0)
        var kinds: Set<MRRMove> = []
        for _ in 0..<300 {
            let periods = Self.history(&generator)
            let moves = MRRMovement.dayMoves(of: periods, fromDay: nil, paidEndedBefore: false)
            for midnight in (firstDay - 1)..<(firstDay + 700) {
                var sums: [String: Int64] = [:]
                for move in moves where move.day <= midnight { sums[move.currency, default: 0] += move.twelfths }
                #expect(sums.filter { $0.value != 0 } == Self.worth(periods, atDay: midnight), "\(periods) at \(midnight)")
            }
            for move in moves {
                kinds.insert(move.move)
                let before = Self.worth(periods, atDay: move.day - 1), after = Self.worth(periods, atDay: move.day)
                let expected: MRRMove
                if before.keys != after.keys, !before.isEmpty, !after.isEmpty {  // another currency
                    expected = move.twelfths < 0 ? .churned : .reactivation
                } else if before.isEmpty {
                    expected = Self.paidEnded(periods, by: move.day - 1) ? .reactivation : .new
                } else if after.isEmpty {
                    expected = .churned
                } else {
                    expected = after.values.first! > before.values.first! ? .expansion : .contraction
                }
                #expect(move.move == expected, "\(periods): \(move)")
                // Of the product it moved to; a churn, of the one it moved from.
                let standing = Self.active(periods, at: (move.move == .churned ? move.day - 1 : move.day) * Self.day)
                #expect(move.product == standing?.product, "\(periods): \(move)")
            }
        }
        #expect(kinds == Set(MRRMove.allCases))  // the histories made every kind
    }

    /// What a write reads (the periods that end after the midnight before its first changed day,
    /// and whether a paid one among the others had ended) gives the whole history's moves from that day.
    @Test func aWritesReadingGivesTheWholeHistorysMoves() {
        var generator = SplitMix(seed: 17)
        let firstDay = FigureInterval.day(of: Self.t0)
        for _ in 0..<300 {
            let periods = Self.history(&generator)
            let bound = firstDay + Int64(generator.next(below: 200))
            let since = (bound - 1) * Self.day
            let read = periods.filter { !$0.revoked && $0.expires! > since }
            let rest = periods.filter { !$0.revoked && $0.expires! <= since }
            let whole = MRRMovement.dayMoves(of: periods, fromDay: nil, paidEndedBefore: false).filter { $0.day >= bound }
            #expect(MRRMovement.dayMoves(of: read, fromDay: bound, paidEndedBefore: Self.paidEnded(rest, by: bound - 1)) == whole,
                    "\(periods) from \(bound)")
        }
    }

    /// Each interval adds up the moves of the midnights after its first up to its read day, and
    /// rounds each amount and the net once, half away from zero.
    @Test func movementIntervalsRoundOnce() {
        #expect([6, 5, -5, -6, 17, -18, Int64.max, Int64.min].map(IntervalMRRMovement.milliunits)
                == [1, 0, 0, -1, 1, -2, Int64.max / 12 + 1, Int64.min / 12 - 1])
        let totals = [
            MRRDayTotal(day: 10, currency: "USD", move: .new, subscriptions: 9, twelfths: 999),  // on the first midnight: before
            MRRDayTotal(day: 11, currency: "USD", move: .new, subscriptions: 2, twelfths: 119_760),
            MRRDayTotal(day: 12, currency: "USD", move: .churned, subscriptions: 1, twelfths: -59_880),
            MRRDayTotal(day: 12, currency: "EUR", move: .expansion, subscriptions: 1, twelfths: 7),
            MRRDayTotal(day: 12, currency: "EUR", move: .contraction, subscriptions: 1, twelfths: -2),
            MRRDayTotal(day: 13, currency: "USD", move: .reactivation, subscriptions: 1, twelfths: 59_880),  // after the read day
        ]
        let intervals = IntervalMRRMovement.make(totals, intervals: [10], readDays: [12])
        #expect(intervals.count == 1 && intervals[0].atMilliseconds == 12 * Self.day)
        #expect(intervals[0].currencies.map(\.currency) == ["EUR", "USD"])
        let eur = intervals[0].currencies[0], usd = intervals[0].currencies[1]
        #expect(usd.counts == [2, 0, 0, 1, 0] && usd.amounts.map(\.milliunits) == [9_980, 0, 0, -4_990, 0, 4_990])
        // 7 and -2 twelfths are 1 and 0 milliunits rounded apart, the net of 5 twelfths 0.
        #expect(eur.amounts.map(\.milliunits) == [0, 1, 0, 0, 0, 0])
        #expect(usd.amounts.map(\.name) == ["new_milliunits", "expansion_milliunits", "contraction_milliunits",
                                              "churned_milliunits", "reactivation_milliunits", "net_milliunits"])
    }

    /// The rule applied at one instant, written out apart from the sweep it checks: of the periods
    /// bought by then (undated ones from the start) and not revoked, the latest-ending stands (no
    /// end last; then undated, the earlier purchase, the lower id); active while it has not ended.
    static func active(_ periods: [ActiveSpans.Period], at instant: Int64) -> ActiveSpans.Period? {
        let bought = periods.filter { !$0.revoked && ($0.purchase.map { $0 <= instant } ?? true) }
        let order = { (p: ActiveSpans.Period) in (p.expires.map { ~$0 } ?? .max, p.purchase == nil ? 0 : 1, p.purchase ?? 0, p.transactionID) }
        guard let standing = bought.min(by: { order($0) < order($1) }), let end = standing.expires, instant < end else {
            return nil
        }
        return standing
    }

    /// A period's plan as MRR reads it (its length from the start when undated); the lengths of
    /// these tests' periods are far from 64 bits' ends.
    static func plan(of period: ActiveSpans.Period) -> BillingPeriod? {
        BillingPeriod.of(milliseconds: period.expires! - (period.purchase ?? 0))
    }
}

/// A small deterministic generator (SplitMix64), so that a failure names a history that reproduces.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next(below bound: UInt64) -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return (z ^ (z >> 31)) % bound
    }
}
