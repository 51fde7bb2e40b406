import Testing
@testable import ReceiptCore

/// IntervalRates: a count over another as a decimal of four places, and the days added up per interval.
struct RateFigureTests {
    @Test func ratiosHaveFourPlacesRoundedHalfUp() {
        #expect(IntervalRates.ratio(1, over: 12) == "0.0833")
        #expect(IntervalRates.ratio(1, over: 3) == "0.3333")
        #expect(IntervalRates.ratio(2, over: 3) == "0.6667")
        #expect(IntervalRates.ratio(1, over: 20_000) == "0.0001")  // exactly half of the fourth place: up
        #expect(IntervalRates.ratio(1, over: 20_001) == "0.0000")
        #expect(IntervalRates.ratio(0, over: 7) == "0.0000")
        #expect(IntervalRates.ratio(7, over: 7) == "1.0000")
        #expect(IntervalRates.ratio(5, over: 4) == "1.2500")
        #expect(IntervalRates.ratio(199_999, over: 200_000) == "1.0000")  // the carry into the whole part
    }

    /// No denominator, no rate; a negative count (none is kept) none either; the extremes never trap.
    @Test func noRateWithoutADenominatorAndTheExtremesExact() {
        #expect(IntervalRates.ratio(3, over: 0) == nil)
        #expect(IntervalRates.ratio(-1, over: 5) == nil)
        #expect(IntervalRates.ratio(1, over: -5) == nil)
        #expect(IntervalRates.ratio(.max, over: 1) == "9223372036854775807.0000")
        #expect(IntervalRates.ratio(.max - 1, over: .max) == "1.0000")
        #expect(IntervalRates.ratio(.max / 3, over: .max) == "0.3333")
        #expect(IntervalRates.ratio(1, over: .max) == "0.0000")
    }

    @Test func percentagesShiftTheRatioTwoPlaces() {
        #expect(IntervalRates.percent("0.0833") == "8.33%")
        #expect(IntervalRates.percent("0.0000") == "0.00%")
        #expect(IntervalRates.percent("0.0001") == "0.01%")
        #expect(IntervalRates.percent("1.0000") == "100.00%")
        #expect(IntervalRates.percent("12.3456") == "1234.56%")
        #expect(IntervalRates.percent(IntervalRates.ratio(.max, over: 1)!) == "922337203685477580700.00%")
    }

    @Test func daysAddUpPerIntervalAndEveryIntervalIsListed() {
        let days: [(day: Int64, counts: [Int64])] = [(0, [10, 1, 4, 3, 2, 1]), (3, [2, 1, 1, 1, 1, 0]), (40, [5, 0, 0, 0, 0, 0])]
        let intervals = IntervalRates.make(days, intervals: [0, 31, 59], by: .month)
        #expect(intervals.map(\.counts) == [[12, 2, 5, 4, 3, 1], [5, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]])
        #expect(intervals[0].rateFigures.map(\.value) == ["0.1667", "0.8000", "0.3333"])
        #expect(intervals[2].rateFigures.map(\.value) == [nil, nil, nil])
        #expect(intervals.map(\.startMilliseconds) == [0, 31 * FigureInterval.dayMilliseconds, 59 * FigureInterval.dayMilliseconds])
    }
}
