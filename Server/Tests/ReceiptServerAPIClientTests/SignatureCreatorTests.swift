import Foundation
import ReceiptCore
import ReceiptServerAPIClient
import Testing

/// Apple's Swift signature creators by their names, and the typed in-app request
/// builders: what each puts in the signed `request` claim, and what the core refuses.
struct SignatureCreatorTests {
    /// A new P-256 key (openssl), as App Store Connect's .p8 holds one.
    static let signingKey: String? = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("creator-\(UUID().uuidString).p8").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path]
        guard (try? process.run()) != nil else { return nil }
        process.waitUntilExit()
        return FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }()

    static func creator() throws -> AdvancedCommerceInAppSignatureCreator {
        try AdvancedCommerceInAppSignatureCreator(signingKey: try #require(signingKey, "openssl makes the key"),
                                                  keyId: "KEY123ABCD", issuerId: "57246542-96fe-1a63-e053-0824d011072a",
                                                  bundleId: "com.example.app")
    }

    /// The JSON object a JWS claim holds, base64url or base64 decoded.
    static func decoded(_ text: String) throws -> [String: Any] {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        let data = try #require(Data(base64Encoded: base64))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func signedRequest(_ request: some AdvancedCommerceInAppRequest) async throws -> [String: Any] {
        let token = try await creator().createSignature(advancedCommerceInAppRequest: request)
        let claims = try decoded(String(token.split(separator: ".")[1]))
        #expect(claims["aud"] as? String == "advanced-commerce-api" && claims["bid"] as? String == "com.example.app")
        return try decoded(try #require(claims["request"] as? String))
    }

    static let info = AdvancedCommerceRequestInfo(requestReferenceId: "550e8400-e29b-41d4-a716-446655440000")

    @Test func eachOfApplesFourInAppRequestsIsSignedWithItsOperation() async throws {
        let charge = try await Self.signedRequest(AdvancedCommerceOneTimeChargeCreateRequest(
            requestInfo: Self.info, currency: "USD",
            item: AdvancedCommerceOneTimeChargeItem(SKU: "sku.1", description: "One report", displayName: "Report", price: 4990),
            taxCode: "C003-00-2"))
        #expect(charge["operation"] as? String == "CREATE_ONE_TIME_CHARGE" && charge["version"] as? String == "1")
        #expect((charge["item"] as? [String: Any])?["price"] as? Int == 4990 && charge["storefront"] == nil)
        let offer = AdvancedCommerceOffer(period: .P1W, periodCount: 2, price: 0, reason: .ACQUISITION)
        let create = try await Self.signedRequest(AdvancedCommerceSubscriptionCreateRequest(
            requestInfo: Self.info, currency: "USD", descriptors: AdvancedCommerceDescriptors(description: "Pro", displayName: "Pro"),
            items: [AdvancedCommerceSubscriptionCreateItem(SKU: "sku.pro", description: "Pro", displayName: "Pro", price: 9990,
                                                           offer: offer)],
            period: .P1M, taxCode: "C003-00-2"))
        #expect(create["operation"] as? String == "CREATE_SUBSCRIPTION" && create["period"] as? String == "P1M")
        let modify = try await Self.signedRequest(AdvancedCommerceSubscriptionModifyInAppRequest(
            requestInfo: Self.info, transactionId: "2000000000000001", retainBillingCycle: true,
            removeItems: [AdvancedCommerceSubscriptionModifyRemoveItem(SKU: "sku.old")],
            periodChange: AdvancedCommerceSubscriptionModifyPeriodChange(effective: .NEXT_BILL_CYCLE, period: .P1Y)))
        #expect(modify["operation"] as? String == "MODIFY_SUBSCRIPTION" && modify["retainBillingCycle"] as? Bool == true)
        #expect((modify["periodChange"] as? [String: Any])?["period"] as? String == "P1Y")
        let reactivate = try await Self.signedRequest(AdvancedCommerceSubscriptionReactivateInAppRequest(
            requestInfo: Self.info, transactionId: "2000000000000001"))
        #expect(reactivate["operation"] as? String == "REACTIVATE_SUBSCRIPTION" && reactivate["items"] == nil)
        #expect((reactivate["requestInfo"] as? [String: Any])?["requestReferenceId"] as? String == Self.info.requestReferenceId)
    }

    @Test func aRequestAppleWouldRefuseIsNotSigned() async throws {
        let tooLong = AdvancedCommerceOneTimeChargeCreateRequest(
            requestInfo: Self.info, currency: "USD",
            item: AdvancedCommerceOneTimeChargeItem(SKU: "sku.1", description: "d", displayName: String(repeating: "x", count: 31),
                                                    price: 1),
            taxCode: "t")
        await #expect { _ = try await Self.creator().createSignature(advancedCommerceInAppRequest: tooLong) } throws: { error in
            (error as? ReceiptError)?.detail.contains("item.displayName must be 1 to 30 characters") == true
        }
        // A change item's members on a one-time charge are not Apple's model.
        var offered = tooLong
        offered.item = AdvancedCommerceOneTimeChargeItem(SKU: "sku.1", description: "d", displayName: "n", price: 1, reason: .UPGRADE)
        await #expect { _ = try await Self.creator().createSignature(advancedCommerceInAppRequest: offered) } throws: { error in
            (error as? ReceiptError)?.detail.contains("item.reason is not a member here") == true
        }
        let badID = AdvancedCommerceSubscriptionReactivateInAppRequest(requestInfo: Self.info, transactionId: "transactionId")
        await #expect { _ = try await Self.creator().createSignature(advancedCommerceInAppRequest: badID) } throws: { error in
            (error as? ReceiptError)?.detail.contains("transactionId must be 1 to 20 digits") == true
        }
    }

    @Test func theOfferCreatorsSignByApplesNames() async throws {
        let key = try #require(Self.signingKey)
        let v2 = try await PromotionalOfferV2SignatureCreator(signingKey: key, keyId: "KEY123ABCD",
                                                              issuerId: "57246542-96fe-1a63-e053-0824d011072a",
                                                              bundleId: "com.example.app")
            .createSignature(productId: "com.example.monthly", offerIdentifier: "offer-1", transactionId: "2000000000000001")
        let claims = try Self.decoded(String(v2.split(separator: ".")[1]))
        #expect(claims["aud"] as? String == "promotional-offer" && claims["offerIdentifier"] as? String == "offer-1")
        let intro = try await IntroductoryOfferEligibilitySignatureCreator(signingKey: key, keyId: "KEY123ABCD",
                                                                           issuerId: "57246542-96fe-1a63-e053-0824d011072a",
                                                                           bundleId: "com.example.app")
            .createSignature(productId: "com.example.monthly", allowIntroductoryOffer: false, transactionId: "2000000000000001")
        let introClaims = try Self.decoded(String(intro.split(separator: ".")[1]))
        #expect(introClaims["aud"] as? String == "introductory-offer-eligibility"
                && introClaims["allowIntroductoryOffer"] as? Bool == false)
        // Apple's placeholder ids are taken, as Apple's library takes them; what breaks a header is not.
        let placeholders = try await PromotionalOfferV2SignatureCreator(signingKey: key, keyId: "keyId", issuerId: "issuerId",
                                                                        bundleId: "bundleId")
            .createSignature(productId: "productId", offerIdentifier: "offerIdentifier", transactionId: nil)
        let header = try Self.decoded(String(placeholders.split(separator: ".")[0]))
        #expect(header["kid"] as? String == "keyId")
        #expect(throws: ReceiptError.self) {
            try PromotionalOfferV2SignatureCreator(signingKey: key, keyId: "key\nId", issuerId: "issuerId", bundleId: "b")
        }
    }
}
