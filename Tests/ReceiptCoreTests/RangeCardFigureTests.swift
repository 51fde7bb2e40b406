import Testing
@testable import ReceiptCore

/// RangeCard: the rates' counts and the revenue's net added up over two ranges, the rates made
/// from the sums (never from the intervals' rates), and each change signed.
struct RangeCardFigureTests {
    private static let dayMilliseconds = FigureInterval.dayMilliseconds

    /// Counts by IntervalRates.countNames: paid, refunded paid, new, new paying, trial starts, converted trials.
    private func day(_ day: Int64, _ counts: [Int64]) -> (day: Int64, counts: [Int64]) { (day, counts) }

    private func money(_ day: Int64, _ currency: String, began: Int64, refunded: Int64) -> DayRevenue {
        var revenue = DayRevenue(day: day, currency: currency)
        (revenue.began, revenue.refunded) = ((1, began), (refunded > 0 ? 1 : 0, refunded))
        return revenue
    }

    /// Two days' churned by Apple's expirationIntent (3: another reason).
    private var churnDays: [DayFlows] {
        var (first, second) = (DayFlows(day: 10), DayFlows(day: 11))
        first.churned = [(1, 1), (2, 1)]
        second.churned = [(1, 1), (3, 1)]
        return [first, second]
    }

    @Test func sumsRatesAndChanges() {
        let cards = RangeCard.cards(
            rates: [day(10, [4, 1, 3, 2, 2, 1]), day(11, [4, 0, 1, 1, 0, 0])],
            previousRates: [day(1, [5, 0, 4, 4, 1, 0])],
            revenue: [money(10, "USD", began: 9_990, refunded: 2_500), money(11, "EUR", began: 4_990, refunded: 0)],
            previousRevenue: [money(1, "USD", began: 19_980, refunded: 0)],
            churn: IntervalChurn.over(churnDays, startMilliseconds: 0, activeAtStart: 40),
            previousChurn: IntervalChurn(startMilliseconds: 0, counts: [20, 1, 0, 0]), activeNow: 45,
            atEnd: ActiveStanding(active: 44, trials: 3, prices: [
                PriceGroup(currency: "USD", periodMilliseconds: 30 * Self.dayMilliseconds, subscriptions: 40, priceSum: 399_600),
                PriceGroup(currency: "USD", periodMilliseconds: 7 * Self.dayMilliseconds, subscriptions: 3, priceSum: 0),
            ]),
            atStart: ActiveStanding(active: 40, trials: 5, prices: [
                PriceGroup(currency: "EUR", periodMilliseconds: 365 * Self.dayMilliseconds, subscriptions: 2, priceSum: 119_980),
                PriceGroup(currency: "USD", periodMilliseconds: 30 * Self.dayMilliseconds, subscriptions: 35, priceSum: 349_650),
            ]))
        let byName = Dictionary(uniqueKeysWithValues: cards.map { (($0.currency.map { "\($0)/" } ?? "") + $0.name, $0) })
        #expect(cards.map(\.name) == ["active_subscriptions", "active_trials", "mrr_milliunits", "mrr_milliunits", "new", "new_paying",
                                      "conversion_to_paying", "trial_conversion_rate", "churn_rate", "refund_rate", "net_milliunits",
                                      "net_milliunits"])
        // The trials and MRR at the range's last midnight against its first: a currency on one side only is 0 on the other.
        #expect(byName["active_trials"].map { [$0.value, $0.previous, $0.change] } == ["3", "5", "-2"])
        #expect(byName["USD/mrr_milliunits"].map { [$0.value, $0.previous, $0.change] } == ["399600", "349650", "+49950"])
        #expect(byName["EUR/mrr_milliunits"].map { [$0.value, $0.previous, $0.change] } == ["0", "9998", "-9998"])
        // Active now against active at the range's first midnight (the churn's).
        #expect(byName["active_subscriptions"].map { [$0.value, $0.previous, $0.change] } == ["45", "40", "+5"])
        // 4 churned on the range's days (by reason: 2 voluntary, 1 billing, 1 other) over the 40 active at its start.
        #expect(byName["churn_rate"].map { [$0.value, $0.previous, $0.change] } == ["0.1000", "0.0500", "+0.0500"])
        #expect(IntervalChurn.over(churnDays, startMilliseconds: 0, activeAtStart: 40).counts == [40, 2, 1, 1])
        #expect(byName["new"].map { [$0.value, $0.previous, $0.change] } == ["4", "4", "+0"])
        #expect(byName["new_paying"].map { [$0.value, $0.previous, $0.change] } == ["3", "4", "-1"])
        // 3 of 4 against 4 of 4: from the sums, not the average of the days' rates (2/3 and 1/1).
        #expect(byName["conversion_to_paying"].map { [$0.value, $0.previous, $0.change] } == ["0.7500", "1.0000", "-0.2500"])
        #expect(byName["trial_conversion_rate"].map { [$0.value, $0.previous, $0.change] } == ["0.5000", "0.0000", "+0.5000"])
        #expect(byName["refund_rate"].map { [$0.value, $0.previous, $0.change] } == ["0.1250", "0.0000", "+0.1250"])
        #expect(byName["EUR/net_milliunits"].map { [$0.value, $0.previous, $0.change] } == ["4990", "0", "+4990"])
        #expect(byName["USD/net_milliunits"].map { [$0.value, $0.previous, $0.change] } == ["7490", "19980", "-12490"])
    }

    /// No denominator on either side: no rate and no change; changes past 64 bits: none rather than a wrong one.
    @Test func noChangeWithoutBothValues() {
        let empty = RangeCard.cards(rates: [], previousRates: [day(1, [2, 1, 1, 1, 0, 0])], revenue: [], previousRevenue: [],
                                    churn: nil, previousChurn: IntervalChurn(startMilliseconds: 0, counts: [0, 2, 0, 0]),
                                    activeNow: 0)
        let refund = empty.first { $0.name == "refund_rate" }!
        #expect(refund.value == nil && refund.previous == "0.5000" && refund.change == nil)
        #expect(empty.first { $0.name == "trial_conversion_rate" }!.previous == nil)
        let churn = empty.first { $0.name == "churn_rate" }!  // none, and nothing active at the earlier start
        #expect(churn.value == nil && churn.previous == nil && churn.change == nil)
        #expect(empty.first { $0.name == "active_subscriptions" }!.previous == nil)  // no range, no start
        let huge = RangeCard(name: "new", kind: .count, currency: nil, value: String(Int64.max), previous: "-1")
        #expect(huge.change == nil)
        let wide = RangeCard(name: "refund_rate", kind: .ratio, currency: nil, value: "922337203685478.0000", previous: "0.0000")
        #expect(wide.change == nil)
        let small = RangeCard(name: "refund_rate", kind: .ratio, currency: nil, value: "0.0001", previous: "0.0123")
        #expect(small.change == "-0.0122")
    }
}
