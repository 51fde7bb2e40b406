@testable import ReceiptCore
import Testing

/// What a subscription is at an instant (SubscriptionState), which copy a store keeps
/// (StoredTransaction.supersedes), what a notification gives a store
/// (ReceivedNotification), and verifyReceipt's merge (LatestReceiptInfo): pure rules,
/// on payloads built here (decoded, never verified: these rules believe their caller).
struct SubscriptionStateTests {
    static let day: Int64 = 86_400_000

    private func jws(_ payload: String, signature: String = "") -> SignedPayload {
        let token = Base64URL.encode(Array(#"{"alg":"ES256"}"#.utf8)) + "." + Base64URL.encode(Array(payload.utf8)) + "." + signature
        return try! SignedPayload.decode(token)
    }

    /// A monthly period `index` of subscription 1000, bought at day 30 × index.
    private func period(_ index: Int64, signed: Int64 = 0, revoked: Int64? = nil, id: String? = nil) -> SignedPayload {
        let purchase = index * 30 * Self.day
        let revocation = revoked.map { #","revocationDate":\#($0),"revocationReason":1"# } ?? ""
        return jws(#"{"transactionId":"\#(id ?? String(1000 + index))","originalTransactionId":"1000","productId":"m","#
                   + #""purchaseDate":\#(purchase),"expiresDate":\#(purchase + 30 * Self.day),"signedDate":\#(signed),"#
                   + #""type":"Auto-Renewable Subscription","quantity":1\#(revocation)}"#)
    }

    private func renewal(signed: Int64, grace: Int64? = nil, retry: Bool = false, autoRenew: Int = 1) -> SignedPayload {
        let extra = (grace.map { #","gracePeriodExpiresDate":\#($0)"# } ?? "") + (retry ? #","isInBillingRetryPeriod":true"# : "")
        return jws(#"{"originalTransactionId":"1000","autoRenewProductId":"m","productId":"m","autoRenewStatus":\#(autoRenew),"#
                   + #""signedDate":\#(signed),"expirationIntent":2\#(extra)}"#)
    }

    private func state(_ transactions: [SignedPayload], _ renewal: SignedPayload? = nil, at: Int64) -> SubscriptionState? {
        SubscriptionState(originalTransactionID: "1000", transactions: transactions, renewalInfo: renewal, at: at)
    }

    @Test func eachOfApplesStatuses() {
        let two = [period(0), period(1)]
        #expect(state(two, at: 45 * Self.day)?.status == .active)
        #expect(state(two, at: 61 * Self.day)?.status == .expired)
        #expect(state(two, renewal(signed: 1, grace: 66 * Self.day, retry: true), at: 61 * Self.day)?.status == .gracePeriod)
        #expect(state(two, renewal(signed: 1, grace: 66 * Self.day, retry: true), at: 70 * Self.day)?.status == .billingRetry)
        #expect(state(two, renewal(signed: 1, retry: false), at: 70 * Self.day)?.status == .expired)
        // The current period refunded: revoked, and no longer entitled, though its end is ahead.
        let refunded = state([period(0), period(1, signed: 5, revoked: 40 * Self.day)], at: 45 * Self.day)
        #expect(refunded?.status == .revoked && refunded?.isEntitled == false)
        // An old period refunded changes nothing about the current one.
        #expect(state([period(0, signed: 5, revoked: 10 * Self.day), period(1)], at: 45 * Self.day)?.status == .active)
        #expect(state([], at: 0) == nil)
        #expect(state([period(0)], at: -1)?.status == .expired)  // not yet started: nothing covers the instant
    }

    /// A purchase Apple signed as another type than an auto-renewable subscription has no
    /// status: judged as one, a consumable would read "expired".
    @Test func aOneTimePurchaseHasNoSubscriptionState() {
        func purchase(_ type: String) -> SignedPayload {
            jws(#"{"transactionId":"1000","originalTransactionId":"1000","productId":"c","purchaseDate":0,"signedDate":0,"#
                + #""type":"\#(type)","quantity":1}"#)
        }
        for type in ["Consumable", "Non-Consumable", "Non-Renewing Subscription"] {
            #expect(state([purchase(type)], at: 1) == nil)
            #expect(SubscriptionState.oneTimeType(of: [purchase(type)]) == type)
            #expect(SubscriptionState.absence(of: "1000", in: [purchase(type)]).detail.contains("type \(type), not an auto-renewable"))
        }
        #expect(SubscriptionState.oneTimeType(of: [period(0)]) == nil)
        #expect(state([purchase("A type Apple adds later")], at: 1)?.status == .expired)
        #expect(SubscriptionState.absence(of: "1000", in: []).detail.contains("no signed transaction"))
    }

    /// A past instant is judged as the subscription stood then: by the periods bought by it
    /// (refunds as known now), without the renewal info when a period was bought after it.
    @Test func aPastInstantIsJudgedByThePeriodThatCoveredIt() {
        let three = [period(0), period(1), period(2)]
        let latest = renewal(signed: 1, grace: 96 * Self.day, retry: true)
        let first = state(three, latest, at: 15 * Self.day)
        #expect(first?.status == .active && first?.latestTransaction.transactionID == "1000")
        #expect(state(three, latest, at: 45 * Self.day)?.latestTransaction.transactionID == "1001")
        // At the end of the last period the renewal info speaks: a grace period; before it, it does not.
        #expect(state(three, latest, at: 91 * Self.day)?.status == .gracePeriod)
        let gap = [period(0), period(2)]  // the second month never bought: a gap, then a reactivation
        #expect(state(gap, latest, at: 45 * Self.day)?.status == .expired)
        // A refund known now takes the refunded period back from the past too.
        let refunded = [period(0), period(1, signed: 5, revoked: 70 * Self.day), period(2)]
        #expect(state(refunded, at: 45 * Self.day)?.status == .revoked)
        #expect(state(refunded, at: 75 * Self.day)?.status == .active)
        // Before the first purchase nothing stood: expired, and the period shown is the first.
        #expect(state(three, latest, at: -1)?.latestTransaction.transactionID == "1000")
    }

    /// A customer in a billing grace period is entitled in the state and in the
    /// entitlements alike: the last period stays active until the grace ends, and only it.
    @Test func aGracePeriodIsActiveInEntitlementsToo() throws {
        let two = [period(0), period(1)]
        let inGrace = try #require(state(two, renewal(signed: 1, grace: 66 * Self.day, retry: true), at: 61 * Self.day))
        #expect(inGrace.isEntitled)
        let ends = SubscriptionState.gracePeriodEnds([inGrace])
        #expect(ends == ["1000": 66 * Self.day])
        let plain = try Entitlements.ofUnverified(transactions: two, at: 61 * Self.day)
        #expect(plain.activeProductIDs.isEmpty)
        let granted = try Entitlements.ofUnverified(transactions: two, at: 61 * Self.day, gracePeriodEnds: ends)
        #expect(granted.activeProductIDs == ["m"])
        #expect(granted.subscriptions.first?.isActive == true && granted.subscriptions.first?.isInGracePeriod == true)
        #expect(granted.purchases.map(\.isActive) == [false, true])  // the earlier period stays ended
        #expect(granted.purchases.last?.endsAt == 66 * Self.day)
        // Past the grace period, or for a refunded last period, nothing is granted.
        #expect(try Entitlements.ofUnverified(transactions: two, at: 67 * Self.day, gracePeriodEnds: ends).activeProductIDs.isEmpty)
        let refunded = [period(0), period(1, signed: 5, revoked: 40 * Self.day)]
        #expect(try Entitlements.ofUnverified(transactions: refunded, at: 61 * Self.day, gracePeriodEnds: ends)
            .activeProductIDs.isEmpty)
        // Expired (no grace period in the renewal info): no end is given.
        #expect(SubscriptionState.gracePeriodEnds([try #require(state(two, renewal(signed: 1), at: 61 * Self.day))]).isEmpty)
    }

    @Test func theLatestSigningOfATransactionCountsWhateverTheOrder() {
        let plain = period(1, signed: 1), refunded = period(1, signed: 2, revoked: 40 * Self.day)
        for order in [[period(0), plain, refunded], [refunded, period(0), plain], [plain, refunded, period(0)]] {
            let judged = state(order, at: 45 * Self.day)
            #expect(judged?.status == .revoked && judged?.transactions.count == 2)
        }
        // From notifications too: each counts as what it carries.
        let carrying = jws(#"{"notificationType":"REFUND","notificationUUID":"u","signedDate":2,"data":{"#
                           + #""signedTransactionInfo":"\#(refunded.compactSerialization)","#
                           + #""signedRenewalInfo":"\#(renewal(signed: 2, autoRenew: 0).compactSerialization)"}}"#)
        let fromNews = SubscriptionState(originalTransactionID: "1000", payloads: [period(0), plain, carrying], at: 45 * Self.day)
        #expect(fromNews?.status == .revoked && fromNews?.renewalInfo?.integer("autoRenewStatus") == 0)
        // Another subscription's payloads are ignored.
        #expect(SubscriptionState(originalTransactionID: "2000", payloads: [period(0), carrying], at: 0) == nil)
    }

    @Test func aStoreKeepsTheLaterSigningAndBreaksTiesByBytes() throws {
        let earlier = try #require(StoredTransaction(verified: period(1, signed: 1)))
        let later = try #require(StoredTransaction(verified: period(1, signed: 2, revoked: 40 * Self.day)))
        #expect(later.supersedes(earlier) && !earlier.supersedes(later))
        let a = try #require(StoredTransaction(verified: jws(#"{"transactionId":"1","originalTransactionId":"1","signedDate":3}"#,
                                                            signature: "AAAA")))
        let b = try #require(StoredTransaction(verified: jws(#"{"transactionId":"1","originalTransactionId":"1","signedDate":3}"#,
                                                            signature: "AAAB")))
        #expect(b.supersedes(a) && !a.supersedes(b) && !a.supersedes(a))
        #expect(StoredTransaction(verified: renewal(signed: 1)) == nil)  // not a transaction
        #expect(StoredTransaction(verified: jws(#"{"transactionId":"1","signedDate":3}"#)) == nil)  // no original id
        func token(_ value: String) throws -> String? {
            try #require(StoredTransaction(verified: jws(#"{"transactionId":"1","originalTransactionId":"1","#
                                                         + #""signedDate":3,"appAccountToken":"\#(value)"}"#))).appAccountToken
        }
        #expect(try token("7E3FB20B-4CDB-47CC-936D-99D65F608138") == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        #expect(try token("AB-CD") == nil)  // no UUID: kept in the JWS, never a key
    }

    @Test func aNotificationGivesItsRowsOrIsRefusedByName() throws {
        let transaction = period(2, signed: 7).compactSerialization
        let info = renewal(signed: 7).compactSerialization
        let passed = VerificationResult(steps: [], anchor: nil, fingerprint: FingerprintSource(known: []))
        let news = try ReceivedNotification(jws(#"{"notificationType":"DID_RENEW","notificationUUID":"u-1","signedDate":7,"#
                                                + #""data":{"signedTransactionInfo":"\#(transaction)","signedRenewalInfo":"\#(info)"}}"#),
                                            verified: passed)
        #expect(news.notificationUUID == "u-1" && news.originalTransactionID == "1000")
        #expect(news.transaction?.transactionID == "1002" && news.renewalInfo?.signedDate == 7)
        let other = jws(#"{"originalTransactionId":"9","autoRenewStatus":1,"signedDate":7}"#).compactSerialization
        let refusals: [(String, String)] = [
            (#"{"notificationType":"DID_RENEW","signedDate":7}"#, "notificationUUID"),
            (#"{"notificationType":"","notificationUUID":"u","signedDate":7}"#, "notificationType"),
            (#"{"notificationType":"X","notificationUUID":"u","signedDate":7,"data":{"signedTransactionInfo":"\#(info)"}}"#,
             "data.signedTransactionInfo"),
            (#"{"notificationType":"X","notificationUUID":"u","signedDate":7,"data":{"signedTransactionInfo":"\#(transaction)","#
             + #""signedRenewalInfo":"\#(other)"}}"#, "data.signedRenewalInfo of 9"),
        ]
        for (payload, named) in refusals {
            #expect {
                _ = try ReceivedNotification(jws(payload), verified: passed)
            } throws: { error in
                (error as? ReceiptError)?.detail.contains(named) == true
            }
        }
        #expect(throws: ReceiptError.self) { _ = try ReceivedNotification(period(0), verified: passed) }
    }

    @Test func aRescissionOfConsentNamesTheAppTransactionOrIsRefused() throws {
        let passed = VerificationResult(steps: [], anchor: nil, fingerprint: FingerprintSource(known: []))
        func rescission(_ appTransaction: String?, type: String = "RESCIND_CONSENT") throws -> ReceivedNotification {
            let member = appTransaction.map { #","signedAppTransactionInfo":"\#(jws($0).compactSerialization)""# } ?? ""
            return try ReceivedNotification(jws(#"{"notificationType":"\#(type)","notificationUUID":"u-2","signedDate":9,"#
                                                + #""appData":{"bundleId":"b"\#(member)}}"#), verified: passed)
        }
        let appTransaction = #"{"appTransactionId":"704289572311","bundleId":"b","receiptType":"Sandbox","signedDate":5}"#
        let row = try #require(try rescission(appTransaction).consentRescission)
        #expect(row.appTransactionID == "704289572311" && row.notificationUUID == "u-2" && row.signedDate == 9)
        #expect(try SignedPayload.decode(row.jws).string("appTransactionId") == "704289572311")
        // Another notification type carrying an app transaction withdraws nothing.
        #expect(try rescission(appTransaction, type: "TEST").consentRescission == nil)
        #expect(throws: ReceiptError.self) { _ = try rescission(nil) }
        #expect(throws: ReceiptError.self) { _ = try rescission(#"{"bundleId":"b","receiptType":"Sandbox","signedDate":5}"#) }
        // The later notification's row supersedes the earlier one's.
        let later = try #require(try ReceivedNotification(jws(#"{"notificationType":"RESCIND_CONSENT","notificationUUID":"u-3","#
            + #""signedDate":10,"appData":{"signedAppTransactionInfo":"\#(jws(appTransaction).compactSerialization)"}}"#),
            verified: passed).consentRescission)
        #expect(later.supersedes(row) && !row.supersedes(later))
        // The read endpoint's answer, both ways.
        let read = String(decoding: ConsentStateJSON.render(appTransactionID: "704289572311", rescission: row), as: UTF8.self)
        #expect(read.contains(#""consent":"rescinded","rescinded_at_ms":9,"notificationUUID":"u-2""#))
        let none = String(decoding: ConsentStateJSON.render(appTransactionID: "1", rescission: nil), as: UTF8.self)
        #expect(none == #"{"appTransactionId":"1","consent":"not_rescinded"}"#)
    }

    @Test func verifyReceiptListsTheStoresTransactionsInPurchaseOrder() {
        let receiptEntry = period(0)  // stands for the receipt's own entry of transaction 1000
        let known = [period(2), period(1, signed: 3, revoked: 40 * Self.day)]
        let purchases: [InAppPurchase] = []
        let merged = LatestReceiptInfo.entries(purchases, known: [receiptEntry] + known, excludeOldTransactions: false)
        let ids = merged.map { entry -> String in
            if case .signed(let payload) = entry { return payload.transactionID ?? "" } else { return "receipt" }
        }
        #expect(ids == ["1000", "1001", "1002"])
        let latest = LatestReceiptInfo.entries(purchases, known: [receiptEntry] + known, excludeOldTransactions: true)
        #expect(latest.count == 1)
        if case .signed(let payload)? = latest.first { #expect(payload.transactionID == "1002") } else { Issue.record("not signed") }
    }
}
