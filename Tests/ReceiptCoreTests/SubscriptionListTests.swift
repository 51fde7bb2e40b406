import Testing
@testable import ReceiptCore

/// SubscriptionList: which statuses a count's name stands for, the pages and the answer of
/// `GET /v1/subscriptions`.
struct SubscriptionListTests {
    @Test func eachCountsNameStandsForItsStatusesAndEntitledForActiveAndGrace() {
        for status in SubscriptionCount.statuses {
            #expect(SubscriptionList.statuses(named: status.name) == [status])
        }
        #expect(SubscriptionList.statuses(named: "entitled") == [.active, .gracePeriod])
        #expect(SubscriptionList.statuses(named: "paying") == nil && SubscriptionList.statuses(named: "") == nil)
        #expect(SubscriptionCount.figureNames.allSatisfy { SubscriptionList.statuses(named: $0) != nil })
        // The entitled list is the count's: a list of it holds as many as the total says.
        let counts = [SubscriptionCount(productID: "p", status: .active, count: 2),
                      SubscriptionCount(productID: "p", status: .gracePeriod, count: 3),
                      SubscriptionCount(productID: "p", status: .billingRetry, count: 7)]
        #expect(SubscriptionCount.total(counts, nil) == 5
                && SubscriptionCount.total(counts, in: SubscriptionList.statuses(named: "entitled")!) == 5)
    }

    @Test func aPageKeepsTheLimitAndNamesTheNextOnlyWhenMoreFollow() {
        let rows = (1...4).map { SubscriptionList.Member(originalTransactionID: "\($0)", productID: "p") }
        let full = SubscriptionList.page(rows, limit: 3)
        #expect(full.members.map(\.originalTransactionID) == ["1", "2", "3"] && full.nextCursor == "3")
        let last = SubscriptionList.page(Array(rows.prefix(3)), limit: 3)
        #expect(last.members.count == 3 && last.nextCursor == nil)
        #expect(SubscriptionList.page([], limit: 3).nextCursor == nil)
        #expect(SubscriptionList.takes(cursor: "2000000000000003") && !SubscriptionList.takes(cursor: "")
                && !SubscriptionList.takes(cursor: "a b") && !SubscriptionList.takes(cursor: String(repeating: "1", count: 65)))
    }

    @Test func theAnswerNamesWhatWasAskedAndEachSubscription() {
        let members = [SubscriptionList.Member(originalTransactionID: "7", productID: "com.example.\"q\"")]
        let json = String(decoding: SubscriptionList.json(members, status: "grace_period", at: 5, product: "p", nextCursor: "7"),
                          as: UTF8.self)
        #expect(json == #"{"at_ms":5,"status":"grace_period","product_id":"p","subscriptions":[{"original_transaction_id":"7","product_id":"com.example.\"q\""}],"next_cursor":"7"}"#)
        let bare = String(decoding: SubscriptionList.json([], status: "active", at: 0, product: nil, nextCursor: nil), as: UTF8.self)
        #expect(bare == #"{"at_ms":0,"status":"active","subscriptions":[]}"#)
    }
}
