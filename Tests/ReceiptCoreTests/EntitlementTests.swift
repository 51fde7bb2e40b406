import ReceiptCore
import Testing

/// Each scenario of a customer's history, built as receipt bytes, judged at chosen instants.
struct EntitlementTests {
    struct Entry {
        var product = "p"
        var transaction = "1"
        var original: String? = nil
        var purchased = "2024-01-01T00:00:00Z"
        var expires: String? = nil
        var cancelled: String? = nil
        var type: Int64? = nil
        var trial: Int64? = nil
        var intro: Int64? = nil
        var quantity: Int64 = 1
    }

    private func receipt(_ entries: [Entry]) throws -> Receipt {
        let purchases = entries.map { entry in
            var attributes = [DER.attribute(1701, DER.integer(entry.quantity)), DER.attribute(1702, DER.utf8(entry.product)),
                              DER.attribute(1703, DER.utf8(entry.transaction)),
                              DER.attribute(1705, DER.utf8(entry.original ?? entry.transaction)),
                              DER.attribute(1704, DER.ia5(entry.purchased)), DER.attribute(1712, DER.ia5(entry.cancelled ?? ""))]
            if let expires = entry.expires { attributes.append(DER.attribute(1708, DER.ia5(expires))) }
            if let type = entry.type { attributes.append(DER.attribute(1707, DER.integer(type))) }
            if let trial = entry.trial { attributes.append(DER.attribute(1713, DER.integer(trial))) }
            if let intro = entry.intro { attributes.append(DER.attribute(1719, DER.integer(intro))) }
            return DER.attribute(17, DER.set(attributes))
        }
        return try Receipt.parse(DER.receipt(attributes: DER.validAppAttributes + purchases))
    }

    private func at(_ text: String) -> Int64 { ReceiptDateText.epochMilliseconds(text)! }

    @Test func activeAndExpiredSubscription() throws {
        let subscription = try receipt([Entry(product: "monthly", purchased: "2024-01-01T00:00:00Z",
                                              expires: "2024-02-01T00:00:00Z", type: 3)])
        let during = Entitlements.ofUnverified(subscription, at: at("2024-01-15T00:00:00Z"))
        #expect(during.activeProductIDs == ["monthly"])
        #expect(during.subscriptions.first?.isActive == true)
        #expect(during.subscriptions.first?.expiresAt == at("2024-02-01T00:00:00Z"))
        let after = Entitlements.ofUnverified(subscription, at: at("2024-02-01T00:00:00Z"))  // the end is exclusive
        #expect(after.activeProductIDs.isEmpty)
        #expect(after.purchases[0].inactiveReason == .expired)
        let before = Entitlements.ofUnverified(subscription, at: at("2023-12-31T23:59:59Z"))
        #expect(before.purchases[0].inactiveReason == .notYetStarted)
    }

    @Test func renewedManyTimesGroupsUnderTheOriginal() throws {
        let months = (1...6).map { month in
            Entry(product: "monthly", transaction: "\(100 + month)", original: "101",
                  purchased: String(format: "2024-%02d-01T00:00:00Z", month),
                  expires: String(format: "2024-%02d-01T00:00:00Z", month + 1), type: 3)
        }
        let entitlements = Entitlements.ofUnverified(try receipt(months.reversed()), at: at("2024-04-10T00:00:00Z"))
        #expect(entitlements.subscriptions.count == 1)
        let subscription = try #require(entitlements.subscriptions.first)
        #expect(subscription.periods.count == 6)
        #expect(subscription.periods.map(\.purchase.transactionID) == (101...106).map { "\($0)" })
        #expect(subscription.latest?.purchase.transactionID == "106")
        #expect(subscription.isActive)
        #expect(entitlements.purchases.filter(\.isActive).map(\.purchase.transactionID) == ["104"])
    }

    @Test func upgradedMidPeriod() throws {
        // Apple cancels the rest of the old period and starts the new product at once.
        let history = try receipt([
            Entry(product: "monthly", transaction: "1", original: "1", purchased: "2024-01-01T00:00:00Z",
                  expires: "2024-02-01T00:00:00Z", cancelled: "2024-01-10T00:00:00Z", type: 3),
            Entry(product: "yearly", transaction: "2", original: "1", purchased: "2024-01-10T00:00:00Z",
                  expires: "2025-01-10T00:00:00Z", type: 3),
        ])
        let entitlements = Entitlements.ofUnverified(history, at: at("2024-01-20T00:00:00Z"))
        #expect(entitlements.activeProductIDs == ["yearly"])
        #expect(entitlements.subscriptions.first?.productID == "yearly")
        #expect(entitlements.purchases[0].inactiveReason == .cancelled)
    }

    @Test func refundedSubscriptionCountsAsNeverPurchased() throws {
        let refunded = try receipt([Entry(product: "monthly", purchased: "2024-01-01T00:00:00Z",
                                          expires: "2024-02-01T00:00:00Z", cancelled: "2024-01-02T00:00:00Z",
                                          type: 3, trial: 1)])
        let entitlements = Entitlements.ofUnverified(refunded, at: at("2024-01-15T00:00:00Z"))
        #expect(entitlements.activeProductIDs.isEmpty)
        #expect(entitlements.subscriptions.first?.latest == nil)
        #expect(entitlements.productsWithTrialOrIntroOfferUsed.isEmpty)
    }

    @Test func trialThenPaidPeriods() throws {
        let history = try receipt([
            Entry(product: "monthly", transaction: "1", original: "1", purchased: "2024-01-01T00:00:00Z",
                  expires: "2024-01-08T00:00:00Z", type: 3, trial: 1, intro: 0),
            Entry(product: "monthly", transaction: "2", original: "1", purchased: "2024-01-08T00:00:00Z",
                  expires: "2024-02-08T00:00:00Z", type: 3, trial: 0, intro: 0),
        ])
        let inTrial = Entitlements.ofUnverified(history, at: at("2024-01-03T00:00:00Z"))
        #expect(inTrial.subscriptions.first?.isActive == true)
        #expect(inTrial.purchases[0].isActive && !inTrial.purchases[1].isActive)
        let paid = Entitlements.ofUnverified(history, at: at("2024-01-20T00:00:00Z"))
        #expect(paid.subscriptions.first?.isInTrialPeriod == false)
        #expect(paid.productsWithTrialOrIntroOfferUsed == ["monthly"])
    }

    @Test func consumableBoughtTwice() throws {
        let history = try receipt([Entry(product: "coins", transaction: "1", type: 1, quantity: 2),
                                   Entry(product: "coins", transaction: "2", type: 1, quantity: 3)])
        let entitlements = Entitlements.ofUnverified(history, at: at("2024-06-01T00:00:00Z"))
        #expect(entitlements.consumableQuantities == ["coins": 5])
        #expect(entitlements.purchases.allSatisfy { $0.inactiveReason == .consumed })
        #expect(entitlements.activeProductIDs.isEmpty)
    }

    @Test func nonConsumableOwnedUnlessRefunded() throws {
        let history = try receipt([Entry(product: "pro", transaction: "1", type: 0),
                                   Entry(product: "themes", transaction: "2", cancelled: "2024-02-01T00:00:00Z", type: 0)])
        let entitlements = Entitlements.ofUnverified(history, at: at("2030-01-01T00:00:00Z"))
        #expect(entitlements.nonConsumables.map(\.purchase.productID) == ["pro"])
        #expect(entitlements.purchases[1].inactiveReason == .cancelled)
    }

    @Test func nonRenewingNeedsADurationFromTheCatalog() throws {
        let history = try receipt([Entry(product: "season", purchased: "2024-01-01T00:00:00Z", type: 2)])
        let unknown = Entitlements.ofUnverified(history, at: at("2024-01-10T00:00:00Z"))
        #expect(unknown.purchases[0].inactiveReason == .unknownDuration)
        let catalog = ProductCatalog(nonRenewingDurations: ["season": 30 * 86_400_000])
        #expect(Entitlements.ofUnverified(history, at: at("2024-01-10T00:00:00Z"), catalog: catalog).activeProductIDs == ["season"])
        #expect(Entitlements.ofUnverified(history, at: at("2024-01-31T00:00:00Z"), catalog: catalog)
            .purchases[0].inactiveReason == .expired)
    }

    @Test func productTypeFromTheCatalogWhenTheReceiptIsSilent() throws {
        let history = try receipt([Entry(product: "pro")])
        #expect(Entitlements.ofUnverified(history, at: 0).purchases[0].inactiveReason == .unknownProductType)
        let catalog = ProductCatalog(kinds: ["pro": .nonConsumable])
        #expect(Entitlements.ofUnverified(history, at: 0, catalog: catalog).activeProductIDs == ["pro"])
    }

    @Test func emptyReceipt() throws {
        let entitlements = Entitlements.ofUnverified(try receipt([]), at: 0)
        #expect(entitlements.purchases.isEmpty && entitlements.subscriptions.isEmpty)
        #expect(entitlements.activeProductIDs.isEmpty && entitlements.consumableQuantities.isEmpty)
    }

    @Test func aReceiptThatDidNotVerifyGivesNothing() throws {
        let unsigned = try receipt([Entry(product: "pro", type: 0)])
        let verdict = ReceiptVerifier().verify(unsigned)
        #expect(throws: ReceiptError.self) { try Entitlements.of(unsigned, verified: verdict, at: 0) }
    }
}

@Suite(.enabled(if: Fixtures.available, Fixtures.skipReason))
struct RealReceiptEntitlementTests {
    private func at(_ text: String) -> Int64 { ReceiptDateText.epochMilliseconds(text)! }

    /// rc__receiptsample1: a sandbox monthly subscription (5-minute periods) renewed six
    /// times on 2020-07-14 after a trial, then upgraded to the annual product on
    /// 2020-07-22 at 17:39:06, expiring 18:39:06 (1-hour sandbox year).
    @Test func revenueCatSampleAtChosenInstants() throws {
        let receipt = try Receipt.parse(try Fixtures.bytes("receipts/rc__receiptsample1.der"))
        let verdict = ReceiptVerifier().verify(receipt)

        let duringAnnual = try Entitlements.of(receipt, verified: verdict, at: at("2020-07-22T18:00:00Z"))
        #expect(duringAnnual.activeProductIDs == ["com.revenuecat.annual_39.99.2_week_intro"])
        let subscription = try #require(duringAnnual.subscriptions.first)
        #expect(duringAnnual.subscriptions.count == 1)  // one original_transaction_id, 1000000692878476
        #expect(subscription.periods.count == 9)
        #expect(subscription.expiresAt == at("2020-07-22T18:39:06Z"))
        // The first period (19:33:26–19:36:26) was the monthly product's trial.
        #expect(duringAnnual.productsWithTrialOrIntroOfferUsed == ["com.revenuecat.monthly_4.99.1_week_intro"])

        // Between the last monthly period (ended 22:13:20 on the 14th) and the upgrade: nothing.
        #expect(try Entitlements.of(receipt, verified: verdict, at: at("2020-07-20T00:00:00Z")).activeProductIDs.isEmpty)
        // Inside the trial: the monthly product, in its trial.
        let inTrial = try Entitlements.of(receipt, verified: verdict, at: at("2020-07-14T19:35:00Z"))
        #expect(inTrial.activeProductIDs == ["com.revenuecat.monthly_4.99.1_week_intro"])
        // After the annual period: expired.
        #expect(try Entitlements.of(receipt, verified: verdict, at: at("2020-07-22T18:39:06Z")).activeProductIDs.isEmpty)
    }
}
