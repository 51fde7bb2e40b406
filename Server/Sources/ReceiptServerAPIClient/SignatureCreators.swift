@_spi(ReceiptInternal) import ReceiptCore

/// Apple's Swift signature creators by their names (`PromotionalOfferV2SignatureCreator`,
/// `IntroductoryOfferEligibilitySignatureCreator`, `AdvancedCommerceInAppSignatureCreator`):
/// each made from what App Store Connect gives and signing with ReceiptCore's
/// SignedRequestCreators, which checks every argument first as Apple's server would.
/// Credentials from Apple's creators' arguments (the key's PEM, key id, issuer id, bundle id), the ids
/// taken as Apple's library takes them (`IDForm.headerSafe`: Apple's placeholders `keyId`, `issuerId`),
/// refusing still what would leak a secret or break a header.
func appleCredentials(_ signingKey: String, _ keyId: String, _ issuerId: String, _ bundleId: String) throws -> ServerAPICredentials {
    try ServerAPICredentials(privateKeyPEM: Array(signingKey.utf8), keyID: keyId, issuerID: issuerId, bundleID: bundleId,
                             idForm: .headerSafe)
}

public struct PromotionalOfferV2SignatureCreator: Sendable {
    let credentials: ServerAPICredentials

    public init(signingKey: String, keyId: String, issuerId: String, bundleId: String) throws {
        credentials = try appleCredentials(signingKey, keyId, issuerId, bundleId)
    }

    public func createSignature(productId: String, offerIdentifier: String, transactionId: String? = nil) async throws -> String {
        try SignedRequestCreators.promotionalOfferV2(credentials, productID: productId, offerIdentifier: offerIdentifier,
                                                     transactionID: transactionId)
    }
}

public struct IntroductoryOfferEligibilitySignatureCreator: Sendable {
    let credentials: ServerAPICredentials

    public init(signingKey: String, keyId: String, issuerId: String, bundleId: String) throws {
        credentials = try appleCredentials(signingKey, keyId, issuerId, bundleId)
    }

    public func createSignature(productId: String, allowIntroductoryOffer: Bool, transactionId: String) async throws -> String {
        try SignedRequestCreators.introductoryOfferEligibility(credentials, productID: productId,
                                                               allowIntroductoryOffer: allowIntroductoryOffer,
                                                               transactionID: transactionId)
    }
}

/// Signs one of the in-app requests of AdvancedCommerceInAppModels.swift (or any
/// `AdvancedCommerceInAppRequest`); the core refuses, by the member at fault, a request
/// that is not one of Apple's four operations with its model's members.
public struct AdvancedCommerceInAppSignatureCreator: Sendable {
    let credentials: ServerAPICredentials

    public init(signingKey: String, keyId: String, issuerId: String, bundleId: String) throws {
        credentials = try appleCredentials(signingKey, keyId, issuerId, bundleId)
    }

    public func createSignature(advancedCommerceInAppRequest request: some AdvancedCommerceInAppRequest) async throws -> String {
        var writer = JSONWriter()
        writer.value(nil, request.json)
        return try SignedRequestCreators.advancedCommerceInAppRequest(credentials, requestJSON: writer.bytes)
    }
}
