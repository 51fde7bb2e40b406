/// What a server signs for the app with its in-app purchase key, as Apple's
/// server libraries do: the original promotional-offer signature, and the JWS of
/// promotional offers V2, introductory-offer eligibility and Advanced Commerce
/// API in-app requests.
public enum SignedRequestCreators {
    /// Apple's separator in the promotional-offer payload: U+2063 INVISIBLE SEPARATOR.
    static let separator = "\u{2063}"

    /// The text an original promotional-offer signature signs: bundle id, key id,
    /// product id, offer id, the lower-cased application username (app account
    /// token, may be empty), the lower-cased nonce and the timestamp (epoch ms),
    /// joined by U+2063.
    public static func promotionalOfferPayload(_ credentials: ServerAPICredentials, productIdentifier: String,
                                               subscriptionOfferID: String, applicationUsername: String,
                                               nonce: String, timestampMilliseconds: Int64) throws(ReceiptError) -> String {
        _ = try ServerAPIValueKind.identifier(maxLength: ServerAPIValueKind.maxIdentifierBytes)
            .normalized(.string(productIdentifier), name: "product identifier")
        _ = try ServerAPIValueKind.identifier(maxLength: ServerAPIValueKind.maxIdentifierBytes)
            .normalized(.string(subscriptionOfferID), name: "subscription offer id")
        guard UUIDText.isWellFormed(nonce) else {
            throw ReceiptError(.invalidArgument, "the nonce must be a UUID; got \(quoted(String(nonce.prefix(64))))")
        }
        guard timestampMilliseconds > 0 else { throw ReceiptError(.invalidArgument, "the timestamp is epoch milliseconds, > 0") }
        return [credentials.bundleID, credentials.keyID, productIdentifier, subscriptionOfferID,
                applicationUsername.lowercased(), nonce.lowercased(), String(timestampMilliseconds)].joined(separator: separator)
    }

    /// The original promotional-offer signature: ECDSA P-256 with SHA-256 over
    /// `promotionalOfferPayload`, DER, base64.
    public static func promotionalOfferSignature(_ credentials: ServerAPICredentials, productIdentifier: String,
                                                 subscriptionOfferID: String, applicationUsername: String,
                                                 nonce: String, timestampMilliseconds: Int64) throws(ReceiptError) -> String {
        let payload = try promotionalOfferPayload(credentials, productIdentifier: productIdentifier,
                                                  subscriptionOfferID: subscriptionOfferID,
                                                  applicationUsername: applicationUsername, nonce: nonce,
                                                  timestampMilliseconds: timestampMilliseconds)
        return Base64.encode(ES256Signature.der(try credentials.signingKey.sign(Array(payload.utf8))))
    }

    /// A promotional offer V2 JWS (audience `promotional-offer`): productId,
    /// offerIdentifier, and transactionId when given.
    public static func promotionalOfferV2(_ credentials: ServerAPICredentials, productID: String, offerIdentifier: String,
                                          transactionID: String?, issuedAt: Int64? = nil) throws(ReceiptError) -> String {
        let product = try ServerAPICall.productID.normalized(.string(productID), name: "productId")
        let offer = try ServerAPICall.productID.normalized(.string(offerIdentifier), name: "offerIdentifier")
        let transaction = try transactionID.map { (id) throws(ReceiptError) in
            try ServerAPIValueKind.transactionID.normalized(.string(id), name: "transactionId")
        }
        return try sign(credentials, audience: "promotional-offer", issuedAt: issuedAt) { claims in
            claims.value("productId", product)
            claims.value("offerIdentifier", offer)
            if let transaction { claims.value("transactionId", transaction) }
        }
    }

    /// An introductory-offer eligibility JWS (audience `introductory-offer-eligibility`).
    public static func introductoryOfferEligibility(_ credentials: ServerAPICredentials, productID: String,
                                                    allowIntroductoryOffer: Bool, transactionID: String,
                                                    issuedAt: Int64? = nil) throws(ReceiptError) -> String {
        let product = try ServerAPICall.productID.normalized(.string(productID), name: "productId")
        let transaction = try ServerAPIValueKind.transactionID.normalized(.string(transactionID), name: "transactionId")
        return try sign(credentials, audience: "introductory-offer-eligibility", issuedAt: issuedAt) { claims in
            claims.value("productId", product)
            claims.bool("allowIntroductoryOffer", allowIntroductoryOffer)
            claims.value("transactionId", transaction)
        }
    }

    /// An Advanced Commerce API in-app request JWS (audience `advanced-commerce-api`):
    /// the claim `request` is the base64 of `requestJSON`, exactly as given: one of Apple's
    /// in-app requests (its `operation` and that model's members, AdvancedCommerceInAppRequests),
    /// refused by name otherwise.
    public static func advancedCommerceInAppRequest(_ credentials: ServerAPICredentials, requestJSON: [UInt8],
                                                    issuedAt: Int64? = nil) throws(ReceiptError) -> String {
        guard requestJSON.count <= 1 << 20 else { throw ReceiptError(.inputTooLarge, "the request is over 1 MiB") }
        let request = try requestJSON.withUnsafeBufferPointer { (buffer) throws(ReceiptError) in
            try JSONValue.parse(buffer, limits: JSONLimits(maxDepth: 16, maxValues: 10_000))
        }
        try AdvancedCommerceInAppRequests.check(request)
        return try sign(credentials, audience: "advanced-commerce-api", issuedAt: issuedAt) { claims in
            claims.string("request", Base64.encode(requestJSON))
        }
    }

    /// The claims every signed request carries (bid, iss, aud, iat, a new nonce) after the feature's own.
    static func sign(_ credentials: ServerAPICredentials, audience: String, issuedAt: Int64?,
                     feature: (inout JSONWriter) -> Void) throws(ReceiptError) -> String {
        var claims = JSONWriter()
        claims.beginObject()
        feature(&claims)
        claims.string("bid", credentials.bundleID)
        claims.string("iss", try credentials.requiredIssuerID())
        claims.string("aud", audience)
        claims.number("iat", issuedAt ?? ServerAPITokenSource.wallClockSeconds())
        claims.string("nonce", try RandomUUID.make())
        claims.endObject()
        return try credentials.signJWT(claims.bytes)
    }
}
