@testable import ReceiptCore
import Testing

/// Apple's 2026 members of a signed transaction: how much a refund took back
/// (revocationType, revocationPercentage) in entitlements and a subscription's state,
/// and the commitment and Advanced Commerce members typed at decode.
struct RevocationShareTests {
    private func jws(_ payload: String) throws(ReceiptError) -> SignedPayload {
        try SignedPayload.decode(Base64URL.encode(Array(#"{"alg":"ES256"}"#.utf8)) + "." + Base64URL.encode(Array(payload.utf8)) + ".")
    }

    /// A purchase of `quantity` units of product `p`, revoked as `revocation` says (JSON members, or none).
    private func purchase(_ type: String, quantity: Int = 1, revocation: String? = nil) throws -> SignedPayload {
        let revoked = revocation.map { #","revocationDate":5000,"revocationReason":0,\#($0)"# } ?? ""
        return try jws(#"{"transactionId":"7","originalTransactionId":"7","productId":"p","purchaseDate":1000,"#
                       + #""signedDate":6000,"type":"\#(type)","quantity":\#(quantity)\#(revoked)}"#)
    }

    private func entitlements(_ payload: SignedPayload) throws -> Entitlements {
        try Entitlements.ofUnverified(transactions: [payload], at: 10_000)
    }

    @Test func aProratedRefundOfOneOfThreeConsumablesLeavesTwo() throws {
        let partly = try entitlements(purchase("Consumable", quantity: 3,
                                               revocation: #""revocationType":"REFUND_PRORATED","revocationPercentage":33333"#))
        #expect(partly.consumableQuantities == ["p": 2])
        let status = try #require(partly.purchases.first)
        #expect(status.inactiveReason == .consumed && status.purchase.refundedQuantity == 1)
        let json = EntitlementsJSON.render(partly)
        #expect(json.contains(#""revocation_type":"REFUND_PRORATED","refunded_share_milliunits":33333,"refunded_quantity":1"#))
        // A full refund of the same purchase leaves nothing, and says so.
        let full = try entitlements(purchase("Consumable", quantity: 3, revocation: #""revocationType":"REFUND_FULL""#))
        #expect(full.consumableQuantities.isEmpty && full.purchases.first?.inactiveReason == .cancelled)
        #expect(EntitlementsJSON.render(full).contains(#""refunded_share_milliunits":100000,"refunded_quantity":3"#))
        // A revocation Apple wrote before revocationType existed is a full one.
        #expect(try entitlements(purchase("Consumable", quantity: 3, revocation: #""storefront":"USA""#)).consumableQuantities.isEmpty)
    }

    @Test func anyOtherRevocationTakesThePurchaseBack() throws {
        for revocation in [#""revocationType":"REFUND_PRORATED","revocationPercentage":40000"#, #""revocationType":"FAMILY_REVOKE""#] {
            for type in ["Non-Consumable", "Auto-Renewable Subscription"] {
                let judged = try entitlements(purchase(type, revocation: revocation))
                #expect(judged.activeProductIDs.isEmpty && judged.purchases.first?.inactiveReason == .cancelled, "\(type) \(revocation)")
            }
        }
        let prorated = try entitlements(purchase("Non-Consumable", revocation: #""revocationType":"REFUND_PRORATED","revocationPercentage":40000"#))
        #expect(prorated.purchases.first?.purchase.refundedShare == 40_000)
        // A single unit partly refunded is refunded: any part of a unit takes the unit back.
        #expect(try entitlements(purchase("Consumable", revocation: #""revocationType":"REFUND_PRORATED","revocationPercentage":40000"#))
            .consumableQuantities.isEmpty)
    }

    @Test func aPercentageThatCannotBeReadRefundsEverything() throws {
        for percentage in ["", #","revocationPercentage":200000"#, #","revocationPercentage":-5"#] {
            let judged = try entitlements(purchase("Consumable", quantity: 3, revocation: #""revocationType":"REFUND_PRORATED""# + percentage))
            #expect(judged.consumableQuantities.isEmpty && judged.purchases.first?.purchase.refundedShare == PurchaseFacts.whole,
                    "\(percentage)")
        }
    }

    /// Apple rounds the percentage to a milliunit; a unit is refunded once its share, less that rounding, is reached.
    @Test(arguments: [(3, 33_333, 1), (3, 66_667, 2), (3, 100_000, 3), (3, 0, 0), (10, 9_999, 1), (10, 10_000, 1),
                      (10, 10_001, 2), (2, 50_000, 1), (1, 1, 1)])
    func refundedUnits(quantity: Int, percentage: Int, units: Int64) throws {
        let payload = try purchase("Consumable", quantity: quantity,
                                   revocation: #""revocationType":"REFUND_PRORATED","revocationPercentage":\#(percentage)"#)
        #expect(PurchaseFacts(transaction: payload)?.refundedQuantity == units)
    }

    @Test func aRevokedSubscriptionsStateSaysHowMuch() throws {
        let period = try jws(#"{"transactionId":"8","originalTransactionId":"8","productId":"m","purchaseDate":1000,"#
                             + #""expiresDate":90000,"signedDate":6000,"type":"Auto-Renewable Subscription","quantity":1,"#
                             + #""revocationDate":5000,"revocationType":"REFUND_PRORATED","revocationPercentage":67932}"#)
        let state = try #require(SubscriptionState(originalTransactionID: "8", transactions: [period], renewalInfo: nil, at: 10_000))
        #expect(state.status == .revoked)
        let json = String(decoding: SubscriptionStateJSON.render(state), as: UTF8.self)
        #expect(json.contains(#""revocation_type":"REFUND_PRORATED","refunded_share_milliunits":67932"#))
    }

    @Test func commitmentAndAdvancedCommerceMembersAreTyped() throws {
        let base = #""transactionId":"9","originalTransactionId":"9","productId":"p","type":"Auto-Renewable Subscription""#
        // Apple's shapes decode.
        _ = try jws("{" + base + #","billingPlanType":"MONTHLY","commitmentInfo":{"billingPeriodNumber":3,"#
                    + #""commitmentExpiresDate":1698150000000,"commitmentPrice":119880,"totalBillingPeriods":12},"#
                    + #""advancedCommerceInfo":{"items":[{"SKU":"a","price":1,"refunds":[{"refundAmount":5,"refundType":"PRORATED"}]}]}}"#)
        let cases: [(String, String)] = [
            (#""commitmentInfo":{"billingPeriodNumber":"3"}"#, "commitmentInfo.billingPeriodNumber is a string"),
            (#""billingPlanType":1"#, "billingPlanType is a number"),
            (#""advancedCommerceInfo":{"items":{"SKU":"a"}}"#, "advancedCommerceInfo.items is an object; Apple documents it as object_array"),
            (#""advancedCommerceInfo":{"items":[{"SKU":"a"},{"SKU":"b","refunds":[{"refundAmount":"5"}]}]}"#,
             "advancedCommerceInfo.items[1].refunds[0].refundAmount is a string"),
            (#""advancedCommerceInfo":{"items":[{"offer":{"periodCount":"2"}}]}"#, "advancedCommerceInfo.items[0].offer.periodCount is a string"),
        ]
        for (member, message) in cases {
            #expect(throws: ReceiptError.self, "\(member)") { try jws("{" + base + "," + member + "}") }
            do { _ = try jws("{" + base + "," + member + "}") } catch {
                #expect(error.status == .badField && error.detail.contains(message), "\(error.detail)")
            }
        }
        // The renewal info's commitment.
        #expect(throws: ReceiptError.self) {
            try jws(#"{"originalTransactionId":"9","autoRenewProductId":"p","autoRenewStatus":1,"#
                    + #""commitmentInfo":{"commitmentRenewalDate":"soon"}}"#)
        }
    }
}

/// A subscription that replaced another (a standalone one and a subscription bundle) says which.
struct PreviousSubscriptionLinkTests {
    @Test func theReplacedSubscriptionIsNamedInEntitlementsAndState() throws {
        func period(_ id: String, previous: String?) throws -> SignedPayload {
            let link = previous.map { #","previousOriginalTransactionId":"\#($0)""# } ?? ""
            let payload = #"{"transactionId":"\#(id)","originalTransactionId":"500","productId":"bundle","#
                + #""purchaseDate":\#(id == "501" ? 1000 : 2000),"expiresDate":90000,"signedDate":6000,"#
                + #""type":"Auto-Renewable Subscription","quantity":1\#(link)}"#
            return try SignedPayload.decode(Base64URL.encode(Array(#"{"alg":"ES256"}"#.utf8)) + "."
                                            + Base64URL.encode(Array(payload.utf8)) + ".")
        }
        let periods = [try period("501", previous: "400"), try period("502", previous: nil)]
        let judged = try Entitlements.ofUnverified(transactions: periods, at: 3000)
        #expect(judged.subscriptions.first?.previousOriginalTransactionID == "400")
        #expect(EntitlementsJSON.render(judged).contains(#""previous_original_transaction_id":"400""#))
        let state = try #require(SubscriptionState(originalTransactionID: "500", transactions: periods, renewalInfo: nil, at: 3000))
        #expect(state.previousOriginalTransactionID == "400")
        #expect(String(decoding: SubscriptionStateJSON.render(state), as: UTF8.self)
            .contains(#""previous_original_transaction_id":"400""#))
        // A subscription that replaced none says nothing.
        let alone = try Entitlements.ofUnverified(transactions: [try period("502", previous: nil)], at: 3000)
        #expect(!EntitlementsJSON.render(alone).contains("previous_original_transaction_id"))
        #expect(throws: ReceiptError.self) {
            try SignedPayload.decode(Base64URL.encode(Array(#"{"alg":"ES256"}"#.utf8)) + "." + Base64URL.encode(Array(
                #"{"transactionId":"1","type":"Consumable","previousOriginalTransactionId":400}"#.utf8)) + ".")
        }
    }
}
