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

    @Test func aPageKeepsTheLimitAndNamesTheNextOnlyWhenMoreFollowAtItsInstant() {
        let rows = (1...4).map { SubscriptionList.Member(originalTransactionID: "\($0)", productID: "p") }
        let at: Int64 = 1_796_636_986_000
        let full = SubscriptionList.page(rows, limit: 3, now: at)
        #expect(full.members.map(\.originalTransactionID) == ["1", "2", "3"] && full.nextCursor == .init(now: at, after: "3"))
        #expect(full.nextCursor?.text == "1796636986000-3")
        let last = SubscriptionList.page(Array(rows.prefix(3)), limit: 3, now: at)
        #expect(last.members.count == 3 && last.nextCursor == nil)
        #expect(SubscriptionList.page([], limit: 3, now: at).nextCursor == nil)
        // A cursor reads back as written; its instant within the figures' instants, its id visible ASCII.
        #expect(SubscriptionList.Cursor("1796636986000-2000000000000003") == .init(now: at, after: "2000000000000003"))
        #expect(SubscriptionList.Cursor("1796636986000-a-b") == .init(now: at, after: "a-b"))
        for refused in ["", "2000000000000003", "-1", "1796636986000-", "1796636986000-a b", "+1796636986000-1", "5-1",
                        "1796636986000-" + String(repeating: "1", count: 65), "99999999999999999999-1"] {
            #expect(SubscriptionList.Cursor(refused) == nil, "\(refused)")
        }
    }

    @Test func theAnswerNamesWhatWasAskedAndEachSubscription() {
        let members = [SubscriptionList.Member(originalTransactionID: "7", productID: "com.example.\"q\"")]
        let json = String(decoding: SubscriptionList.json(members, status: "grace_period", at: 5, product: "p",
                                                          nextCursor: .init(now: 5, after: "7")), as: UTF8.self)
        #expect(json == #"{"at_ms":5,"status":"grace_period","product_id":"p","subscriptions":[{"original_transaction_id":"7","product_id":"com.example.\"q\""}],"next_cursor":"5-7"}"#)
        let churned = String(decoding: SubscriptionList.json([], status: "expired", at: 9, product: nil,
                                                             churn: .init(reason: .billing, from: 1, to: 2), nextCursor: nil),
                             as: UTF8.self)
        #expect(churned == #"{"at_ms":9,"status":"expired","churned":"billing","from_ms":1,"to_ms":2,"subscriptions":[]}"#)
        let bare = String(decoding: SubscriptionList.json([], status: "active", at: 0, product: nil, nextCursor: nil), as: UTF8.self)
        #expect(bare == #"{"at_ms":0,"status":"active","subscriptions":[]}"#)
    }
}

/// ChurnReason: the one rule that sorts an expirationIntent into the churned counts.
struct ChurnReasonTests {
    @Test func intentsOneAndTwoAreVoluntaryAndBillingAndAnyOtherIsOther() {
        #expect(ChurnReason(intent: 1) == .voluntary && ChurnReason(intent: 2) == .billing)
        #expect([0, 3, 4, 5, -1].allSatisfy { ChurnReason(intent: $0) == .other })
        #expect(ChurnReason.voluntary.intent == 1 && ChurnReason.billing.intent == 2 && ChurnReason.other.intent == nil)
        #expect(IntervalFlows.churnedNames == ["voluntary", "billing", "other"])
        var day = DayFlows(day: 3)
        day.churned = [(1, 2), (2, 5), (0, 7), (4, 1)]
        #expect(IntervalFlows.churned(on: [day]) == [2, 5, 8])
    }
}

/// SubscriptionList.Began: a list of the periods behind a count of the flows' periods that began.
struct BeganListTests {
    @Test func aListOfPeriodsIsKeyedByEachPeriodsIdAndCountedAsTheFlowsCountIt() {
        #expect(SubscriptionList.Began(name: "renewals", from: 1, to: 2)?.kind == 2)
        #expect(SubscriptionList.Began(name: "expired", from: 1, to: 2) == nil)
        let period = SubscriptionList.Member(originalTransactionID: "10", productID: "p",
                                             period: .init(purchaseDate: 1_700_000_000_000, transactionID: "12"))
        #expect(period.listedID == "12" && period.position == "1700000000000-12")
        let subscription = SubscriptionList.Member(originalTransactionID: "10", productID: "p")
        #expect(subscription.listedID == "10" && subscription.position == "10")
        let page = SubscriptionList.page([period, subscription], limit: 1, now: 7)
        #expect(page.nextCursor == .init(now: 7, after: "1700000000000-12"))
        #expect(SubscriptionList.PeriodPosition("1700000000000-12-3") == .init(purchaseDate: 1_700_000_000_000, transactionID: "12-3"))
        #expect(["12", "-12", "x-12", "1700000000000-", "99999999999999999999-1"].allSatisfy { SubscriptionList.PeriodPosition($0) == nil })
        let json = String(decoding: SubscriptionList.json([period], status: nil, at: nil, product: nil,
                                                          began: SubscriptionList.Began(name: "renewals", from: 1, to: 2),
                                                          nextCursor: nil), as: UTF8.self)
        #expect(json == #"{"began":"renewals","from_ms":1,"to_ms":2,"subscriptions":[{"original_transaction_id":"10","transaction_id":"12","product_id":"p"}]}"#)
        var first = DayFlows(day: 1), second = DayFlows(day: 2)
        (first.began.new, first.began.renewals, second.began.renewals) = (1, 2, 3)
        #expect(IntervalFlows.began("renewals", on: [first, second]) == 5 && IntervalFlows.began("new", on: [first, second]) == 1)
        #expect(IntervalFlows.began("churned", on: [first]) == nil)
    }
}
