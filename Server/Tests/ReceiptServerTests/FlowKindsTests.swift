import ReceiptCore
import Testing
@testable import ReceiptServer

/// The store's kinds of period that began (FlowDays.kinds) are listed in the order of the names
/// the answers give them (IntervalFlows.beganNames): the counts are read by place; and a list of
/// the periods behind a count of the flows or the rates (FlowDays.periods) takes the condition its
/// name's column is kept by.
@Suite struct FlowKindsTests {
    @Test func eachKindSitsAtItsNamesPlace() {
        let columns = FlowDays.kinds.map(\.column)
        #expect(columns.count == IntervalFlows.beganNames.count)
        // The table names the first `new_subscriptions`; the others alike.
        #expect(IntervalFlows.beganNames.map { $0 == "new" ? "new_subscriptions" : $0 } == columns)
        for (kind, name) in zip(FlowDays.kinds, IntervalFlows.beganNames) {
            #expect(FlowDays.condition(named: name) == kind.condition, "\(name)")
        }
        // Every count a list of periods that began takes has its condition, each its own.
        let conditions = SubscriptionList.Began.names.map(FlowDays.condition(named:))
        #expect(conditions.allSatisfy { $0 != nil } && Set(conditions).count == conditions.count)
        #expect(FlowDays.condition(named: "new_paying") == FlowDays.firstPaidPeriod && FlowDays.condition(named: "churned") == nil)
        #expect(IntervalRates.countNames.map(FlowDays.column(named:)).allSatisfy(FlowDays.counted.contains))
        #expect(SubscriptionList.Began(name: "churned") == nil)
    }
}
