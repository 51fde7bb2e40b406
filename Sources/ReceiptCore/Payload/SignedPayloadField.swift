/// The JSON type Apple documents for a member of a signed payload. Enumerations
/// are kept as their raw string or number, so a value Apple adds later still reads.
public enum SignedFieldKind: String, Sendable {
    case string
    /// A whole number (JSON number without fraction or exponent).
    case integer
    /// Epoch milliseconds; Xcode writes fractions of a millisecond, which are cut.
    case date
    case boolean
    case object
    case stringArray = "string_array"
    /// A string that is a compact JWS itself.
    case jws
}

/// Every member Apple documents for each signed payload, with its type (App Store
/// Server API and Notifications V2 references). At decode, a documented member of
/// the wrong JSON type is `RECEIPT_E_BAD_FIELD`; members not listed are kept and
/// read untyped.
public enum SignedPayloadField {
    public static func fields(of kind: SignedPayloadKind) -> [(path: MemberPath, kind: SignedFieldKind)] {
        switch kind {
        case .transaction: transaction
        case .renewalInfo: renewalInfo
        case .notification: notification
        case .appTransaction: appTransaction
        case .realtimeRequest: realtimeRequest
        case .unknown: []
        }
    }

    /// Retention Messaging's DecodedRealtimeRequestBody.
    static let realtimeRequest: [(path: MemberPath, kind: SignedFieldKind)] = [
        ("originalTransactionId", .string), ("appAppleId", .integer), ("productId", .string), ("userLocale", .string),
        ("requestIdentifier", .string), ("signedDate", .date), ("environment", .string),
    ]

    static let transaction: [(path: MemberPath, kind: SignedFieldKind)] = [
        ("appAccountToken", .string), ("appTransactionId", .string), ("bundleId", .string), ("currency", .string),
        ("environment", .string), ("expiresDate", .date), ("inAppOwnershipType", .string), ("isUpgraded", .boolean),
        ("offerDiscountType", .string), ("offerIdentifier", .string), ("offerPeriod", .string), ("offerType", .integer),
        ("originalPurchaseDate", .date), ("originalTransactionId", .string), ("price", .integer), ("productId", .string),
        ("purchaseDate", .date), ("quantity", .integer), ("revocationDate", .date), ("revocationReason", .integer),
        ("revocationType", .string), ("revocationPercentage", .integer), ("signedDate", .date),
        ("storefront", .string), ("storefrontId", .string), ("subscriptionGroupIdentifier", .string),
        ("transactionId", .string), ("transactionReason", .string), ("type", .string),
        ("webOrderLineItemId", .string), ("advancedCommerceInfo", .object),
    ]

    static let renewalInfo: [(path: MemberPath, kind: SignedFieldKind)] = [
        ("appAccountToken", .string), ("appTransactionId", .string), ("autoRenewProductId", .string),
        ("autoRenewStatus", .integer), ("currency", .string), ("eligibleWinBackOfferIds", .stringArray),
        ("environment", .string), ("expirationIntent", .integer), ("gracePeriodExpiresDate", .date),
        ("isInBillingRetryPeriod", .boolean), ("offerDiscountType", .string), ("offerIdentifier", .string),
        ("offerPeriod", .string), ("offerType", .integer), ("originalTransactionId", .string),
        ("priceIncreaseStatus", .integer), ("productId", .string), ("recentSubscriptionStartDate", .date),
        ("renewalDate", .date), ("renewalPrice", .integer), ("signedDate", .date), ("advancedCommerceInfo", .object),
    ]

    static let notification: [(path: MemberPath, kind: SignedFieldKind)] = [
        ("notificationType", .string), ("subtype", .string), ("notificationUUID", .string), ("version", .string),
        ("signedDate", .date),
        ("data", .object), ("data.appAppleId", .integer), ("data.bundleId", .string), ("data.bundleVersion", .string),
        ("data.consumptionRequestReason", .string), ("data.environment", .string), ("data.status", .integer),
        ("data.signedRenewalInfo", .jws), ("data.signedTransactionInfo", .jws),
        ("summary", .object), ("summary.requestIdentifier", .string), ("summary.environment", .string),
        ("summary.appAppleId", .integer), ("summary.bundleId", .string), ("summary.productId", .string),
        ("summary.storefrontCountryCodes", .stringArray), ("summary.failedCount", .integer),
        ("summary.succeededCount", .integer),
        ("externalPurchaseToken", .object), ("externalPurchaseToken.externalPurchaseId", .string),
        ("externalPurchaseToken.tokenCreationDate", .date), ("externalPurchaseToken.appAppleId", .integer),
        ("externalPurchaseToken.bundleId", .string),
        ("appData", .object), ("appData.appAppleId", .integer), ("appData.bundleId", .string),
        ("appData.environment", .string), ("appData.signedAppTransactionInfo", .jws),
    ]

    static let appTransaction: [(path: MemberPath, kind: SignedFieldKind)] = [
        ("appAppleId", .integer), ("appTransactionId", .string), ("applicationVersion", .string),
        ("bundleId", .string), ("deviceVerification", .string), ("deviceVerificationNonce", .string),
        ("originalApplicationVersion", .string), ("originalPlatform", .string), ("originalPurchaseDate", .date),
        ("preorderDate", .date), ("receiptCreationDate", .date), ("receiptType", .string), ("requestDate", .date),
        ("versionExternalIdentifier", .integer),
    ]

    /// Whether `value` has the JSON type `kind` documents.
    static func conforms(_ value: JSONValue, to kind: SignedFieldKind) -> Bool {
        switch (kind, value) {
        case (.string, .string), (.jws, .string), (.boolean, .bool), (.object, .object): true
        case (.integer, .number(let text)): Int64(text) != nil
        case (.date, .number): value.epochMilliseconds != nil
        case (.stringArray, .array(let items)): items.allSatisfy { $0.stringValue != nil }
        default: false
        }
    }

    /// Checks every documented member present in `payload` against its kind.
    static func check(_ payload: JSONValue, as kind: SignedPayloadKind) throws(ReceiptError) {
        for (path, fieldKind) in fields(of: kind) {
            guard let value = payload.member(at: path), value != .null else { continue }
            guard conforms(value, to: fieldKind) else {
                throw ReceiptError(.badField, "\(path) is \(value.kindName); Apple documents it as \(fieldKind.rawValue)")
            }
        }
    }
}

/// A dotted path of object members (`data.bundleId`), split once.
public struct MemberPath: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let description: String
    let components: [String]

    public init(_ text: String) {
        description = text
        components = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    public init(stringLiteral text: String) { self.init(text) }
}

extension JSONValue {
    /// The member at a path of object members, or nil.
    public func member(at path: MemberPath) -> JSONValue? {
        var current = self
        for name in path.components {
            guard let next = current[name] else { return nil }
            current = next
        }
        return current
    }

    /// The member at a dotted path (`data.bundleId`), or nil. A name without a dot is
    /// looked up as it is: most reads are of top-level members, and splitting costs more than the look-up.
    public func member(atPath path: String) -> JSONValue? {
        path.utf8.contains(UInt8(ascii: ".")) ? member(at: MemberPath(path)) : self[path]
    }
}
