import Testing
@testable import ReceiptServer

/// The flows chart's y axis: round ticks from 0 that reach the highest bar, never trapping.
@Suite struct DashboardAxisTests {
    @Test func ticksAreRoundStepsReachingTheHighest() {
        #expect(DashboardPage.ticks(reaching: 0) == [0, 1])
        #expect(DashboardPage.ticks(reaching: 1) == [0, 1])
        #expect(DashboardPage.ticks(reaching: 5) == [0, 1, 2, 3, 4, 5])
        #expect(DashboardPage.ticks(reaching: 7) == [0, 2, 4, 6, 8])
        #expect(DashboardPage.ticks(reaching: 23) == [0, 5, 10, 15, 20, 25])
        #expect(DashboardPage.ticks(reaching: 1_000) == [0, 200, 400, 600, 800, 1_000])
        #expect(DashboardPage.ticks(reaching: 1_001) == [0, 500, 1_000, 1_500])
    }

    @Test func theExtremesKeepTwoTicks() {
        #expect(DashboardPage.ticks(reaching: .max) == [0, .max])
        #expect(DashboardPage.ticks(reaching: 9_000_000_000_000_000_000) == [0, 9_000_000_000_000_000_000])
        #expect(DashboardPage.ticks(reaching: 4_000_000_000_000_000_000) == [0, 1_000_000_000_000_000_000,
                                                                             2_000_000_000_000_000_000,
                                                                             3_000_000_000_000_000_000,
                                                                             4_000_000_000_000_000_000])
    }
}
