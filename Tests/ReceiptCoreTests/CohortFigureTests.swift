import Testing
@testable import ReceiptCore

/// IntervalCohort: the days' first paid periods and money added up per interval, the runs
/// counted for each period followed, and the money per paying subscription rounded.
struct CohortFigureTests {
    @Test func perPayingRoundsHalvesAwayFromZeroAndNeverTraps() {
        #expect(IntervalCohort.roundedQuotient(10, over: 4) == 3)  // 2.5
        #expect(IntervalCohort.roundedQuotient(9, over: 4) == 2)  // 2.25
        #expect(IntervalCohort.roundedQuotient(-10, over: 4) == -3)  // -2.5
        #expect(IntervalCohort.roundedQuotient(-9, over: 4) == -2)
        #expect(IntervalCohort.roundedQuotient(7, over: 0) == nil)
        #expect(IntervalCohort.roundedQuotient(7, over: -1) == nil)
        #expect(IntervalCohort.roundedQuotient(.max, over: 1) == .max)
        #expect(IntervalCohort.roundedQuotient(.min, over: 1) == .min)
        #expect(IntervalCohort.roundedQuotient(.max, over: .max) == 1)
        #expect(IntervalCohort.roundedQuotient(.max / 2 + 1, over: .max) == 1)  // just over a half
        #expect(IntervalCohort.roundedQuotient(.max / 2, over: .max) == 0)  // just under
        #expect(IntervalCohort.roundedQuotient(.min, over: .max) == -1)
    }

    /// Two days of one month and one of the next, by month: each interval's cohort, its runs
    /// counted for each period followed (a run longer than followed counts in every one), money
    /// in a currency nobody first paid in has no per-paying figure.
    @Test func daysMakeEachIntervalsCohort() {
        let november = FigureInterval.instant("2026-11-01")! / FigureInterval.dayMilliseconds
        let december = FigureInterval.instant("2026-12-01")! / FigureInterval.dayMilliseconds
        let firstPaid = [
            IntervalCohort.FirstPaidDay(day: november, currency: "USD", continued: 0, subscriptions: 2),
            IntervalCohort.FirstPaidDay(day: november + 3, currency: "USD", continued: 2, subscriptions: 1),
            IntervalCohort.FirstPaidDay(day: november + 3, currency: "EUR", continued: 9, subscriptions: 1),
            IntervalCohort.FirstPaidDay(day: december, currency: "USD", continued: -1, subscriptions: 1),
        ]
        let revenue = [
            IntervalCohort.RevenueDay(day: november, currency: "USD", net: 9_990, periods: 1),
            IntervalCohort.RevenueDay(day: november + 3, currency: "USD", net: 19_980, periods: 1),
            IntervalCohort.RevenueDay(day: november + 3, currency: "EUR", net: 5_000, periods: 1),
            IntervalCohort.RevenueDay(day: november + 3, currency: "GBP", net: 1_000, periods: 1),
        ]
        let cohorts = IntervalCohort.make(firstPaid, revenue: revenue, intervals: [november, december, december + 31],
                                          by: .month, periods: 3)
        #expect(cohorts.map(\.subscriptions) == [4, 1, 0])
        #expect(cohorts[0].retained == [2, 2, 1])
        #expect(cohorts[0].retention == ["0.5000", "0.5000", "0.2500"])
        #expect(cohorts[0].currencies.map(\.currency) == ["EUR", "GBP", "USD"])
        #expect(cohorts[0].currencies.map(\.paying) == [1, 0, 3])
        #expect(cohorts[0].currencies.map(\.perPaying) == [5_000, nil, 9_990])
        #expect(cohorts[1].retained == [0, 0, 0] && cohorts[1].currencies.map(\.net) == [0])
        #expect(cohorts[2].retention == [nil, nil, nil] && cohorts[2].currencies.isEmpty)
        #expect(cohorts[2].startMilliseconds == (december + 31) * FigureInterval.dayMilliseconds)
        // Followed for more periods than allowed, or none: held to 1 ... maxPeriods.
        #expect(IntervalCohort.make(firstPaid, revenue: [], intervals: [november], by: .month, periods: 0)[0].retained == [2])
        #expect(IntervalCohort.make([], revenue: [], intervals: [november], by: .month, periods: 10_000)[0].retained.count
                    == IntervalCohort.maxPeriods)
    }

    /// A query's number of periods (the cohorts' `periods`, a list's `retained`): digits alone, 1 ... maxPeriods.
    @Test func aNumberOfPeriodsIsOneToThreeDigitsWithinTheMost() {
        #expect(["1", "12", "120", "012"].map(IntervalCohort.periods(named:)) == [1, 12, 120, 12])
        #expect(["", "0", "121", "+12", "-1", "1.5", " 1", "1000", "١٢"].allSatisfy { IntervalCohort.periods(named: $0) == nil })
    }
}
