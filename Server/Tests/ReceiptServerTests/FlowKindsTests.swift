import ReceiptCore
import Testing
@testable import ReceiptServer

/// The store's kinds of period that began (FlowDays.kinds) are listed in the order of the names
/// the answers give them (IntervalFlows.beganNames): the counts are read by place, and a list of
/// the periods behind a count (FlowDays.periods) takes the kind's condition by the name's place.
@Suite struct FlowKindsTests {
    @Test func eachKindSitsAtItsNamesPlace() {
        let columns = FlowDays.kinds.map(\.column)
        #expect(columns.count == IntervalFlows.beganNames.count)
        // The table names the first `new_subscriptions`; the others alike.
        #expect(IntervalFlows.beganNames.map { $0 == "new" ? "new_subscriptions" : $0 } == columns)
        for (place, name) in IntervalFlows.beganNames.enumerated() {
            #expect(SubscriptionList.Began(name: name)?.kind == place)
        }
        #expect(SubscriptionList.Began(name: "churned") == nil)
    }
}
