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
    /// An array of objects, whose members the table types under `name[].member`.
    case objectArray = "object_array"
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
        ("webOrderLineItemId", .string), ("billingPlanType", .string),
        // The subscription this one replaced: a standalone one and a subscription bundle, either way.
        ("previousOriginalTransactionId", .string),
        // A 12-month commitment paid monthly (App Store Server API 1.21).
        ("commitmentInfo", .object), ("commitmentInfo.billingPeriodNumber", .integer),
        ("commitmentInfo.commitmentExpiresDate", .date), ("commitmentInfo.commitmentPrice", .integer),
        ("commitmentInfo.totalBillingPeriods", .integer),
    ] + advancedCommerce("advancedCommerceInfo", [
        ("estimatedTax", .integer), ("taxExclusivePrice", .integer), ("taxRate", .string),
        ("items[].refunds", .objectArray), ("items[].refunds[].refundAmount", .integer),
        ("items[].refunds[].refundDate", .date), ("items[].refunds[].refundReason", .string),
        ("items[].refunds[].refundType", .string), ("items[].revocationDate", .date),
    ])

    static let renewalInfo: [(path: MemberPath, kind: SignedFieldKind)] = [
        ("appAccountToken", .string), ("appTransactionId", .string), ("autoRenewProductId", .string),
        ("autoRenewStatus", .integer), ("currency", .string), ("eligibleWinBackOfferIds", .stringArray),
        ("environment", .string), ("expirationIntent", .integer), ("gracePeriodExpiresDate", .date),
        ("isInBillingRetryPeriod", .boolean), ("offerDiscountType", .string), ("offerIdentifier", .string),
        ("offerPeriod", .string), ("offerType", .integer), ("originalTransactionId", .string),
        ("priceIncreaseStatus", .integer), ("productId", .string), ("recentSubscriptionStartDate", .date),
        ("renewalDate", .date), ("renewalPrice", .integer), ("signedDate", .date),
        ("renewalBillingPlanType", .string),
        ("commitmentInfo", .object), ("commitmentInfo.commitmentAutoRenewProductId", .string),
        ("commitmentInfo.commitmentAutoRenewStatus", .integer),
        ("commitmentInfo.commitmentRenewalBillingPlanType", .string),
        ("commitmentInfo.commitmentRenewalDate", .date), ("commitmentInfo.commitmentRenewalPrice", .integer),
    ] + advancedCommerce("advancedCommerceInfo", [
        ("consistencyToken", .string), ("items[].priceIncreaseInfo", .object),
        ("items[].priceIncreaseInfo.dependentSKUs", .stringArray), ("items[].priceIncreaseInfo.price", .integer),
        ("items[].priceIncreaseInfo.status", .string),
    ])

    /// Advanced Commerce's transaction and renewal info under `root`: the members both
    /// share (descriptors, items with their offer, period, reference, tax code) and `own`.
    private static func advancedCommerce(_ root: String,
                                         _ own: [(path: String, kind: SignedFieldKind)]) -> [(path: MemberPath, kind: SignedFieldKind)] {
        let shared: [(path: String, kind: SignedFieldKind)] = [
            ("descriptors", .object), ("descriptors.description", .string), ("descriptors.displayName", .string),
            ("items", .objectArray), ("items[].SKU", .string), ("items[].description", .string),
            ("items[].displayName", .string), ("items[].price", .integer), ("items[].offer", .object),
            ("items[].offer.period", .string), ("items[].offer.periodCount", .integer), ("items[].offer.price", .integer),
            ("items[].offer.reason", .string), ("period", .string), ("requestReferenceId", .string), ("taxCode", .string),
        ]
        return [(MemberPath(root), .object)] + (shared + own).map { (MemberPath(root + "." + $0.path), $0.kind) }
    }

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
        case (.objectArray, .array(let items)): items.allSatisfy { if case .object = $0 { true } else { false } }
        default: false
        }
    }

    /// Checks every documented member present in `payload` against its kind, and names
    /// the first mistyped one in the table's order.
    static func check(_ payload: JSONValue, as kind: SignedPayloadKind) throws(ReceiptError) {
        guard case .object(let members) = payload else { return }  // nothing documented can be present
        let table = CheckTable.of(kind)
        var first: (order: Int, error: ReceiptError)?
        // Each member present is hashed once, rather than each documented name (most are absent).
        for (name, value) in members where value != .null {
            guard let field = table.topLevel[name], !conforms(value, to: field.kind),
                  field.order < first?.order ?? .max else { continue }
            first = (field.order, mistyped(name, value, field.kind))
        }
        // Nested paths are walked only under a member that is there (commitmentInfo, advancedCommerceInfo, data).
        for group in table.nested where members[group.root] != nil {
            for (order, path, fieldKind) in group.fields where order < first?.order ?? .max {
                if let error = firstMistyped(path, fieldKind, in: payload) {
                    first = (order, error)
                    break
                }
            }
        }
        if let first { throw first.error }
    }

    /// The first member at `path` (each element's, for `name[]`) that is not null and not of `kind`.
    private static func firstMistyped(_ path: MemberPath, _ kind: SignedFieldKind, in payload: JSONValue) -> ReceiptError? {
        if !path.eachElement {
            guard let value = payload.member(at: path), value != .null, !conforms(value, to: kind) else { return nil }
            return mistyped(path.description, value, kind)
        }
        for (value, at) in payload.members(at: path) where value != .null && !conforms(value, to: kind) {
            return mistyped(at, value, kind)
        }
        return nil
    }

    /// A kind's table split once for `check`: its top-level names, and its nested paths
    /// grouped by the member they start from; each entry keeps its place in the table.
    struct CheckTable: Sendable {
        let topLevel: [String: (order: Int, kind: SignedFieldKind)]
        let nested: [(root: String, fields: [(order: Int, path: MemberPath, kind: SignedFieldKind)])]

        init(_ fields: [(path: MemberPath, kind: SignedFieldKind)]) {
            var topLevel: [String: (order: Int, kind: SignedFieldKind)] = [:]
            var nested: [(root: String, fields: [(order: Int, path: MemberPath, kind: SignedFieldKind)])] = []
            for (order, (path, kind)) in fields.enumerated() {
                if path.components.count == 1, !path.eachElement {
                    if topLevel[path.description] == nil { topLevel[path.description] = (order, kind) }
                    continue
                }
                let first = path.components[0]
                let root = first.hasSuffix("[]") ? String(first.dropLast(2)) : first
                if let index = nested.firstIndex(where: { $0.root == root }) {
                    nested[index].fields.append((order, path, kind))
                } else {
                    nested.append((root, [(order, path, kind)]))
                }
            }
            self.topLevel = topLevel
            self.nested = nested
        }

        /// Every kind's, made once.
        private static let byKind = Dictionary(uniqueKeysWithValues: SignedPayloadKind.allCases.map {
            ($0, CheckTable(SignedPayloadField.fields(of: $0)))
        })

        static func of(_ kind: SignedPayloadKind) -> CheckTable { byKind[kind] ?? CheckTable([]) }
    }

    private static func mistyped(_ path: String, _ value: JSONValue, _ kind: SignedFieldKind) -> ReceiptError {
        ReceiptError(.badField, "\(path) is \(value.kindName); Apple documents it as \(kind.rawValue)")
    }
}

/// A dotted path of object members (`data.bundleId`), split once.
public struct MemberPath: Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let description: String
    let components: [String]
    /// Whether a component names each element of an array (`items[]`): see JSONValue.members(at:).
    let eachElement: Bool

    /// Split at each '.' byte. Most paths are one member name, taken as it is: a split of a
    /// String by Characters cost about 8,000 instructions a path, and payload readers build
    /// paths from literals on every call (`firstText(["webOrderLineItemId"])`).
    public init(_ text: String) {
        description = text
        components = JSONValue.isDotted(text)
            ? text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
            : [text]
        eachElement = components.contains { $0.hasSuffix("[]") }
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

    /// Every member at a path whose `name[]` components stand for each element of an
    /// array (`items[].price`), with its concrete path (`items[1].price`) for messages.
    /// What is absent, or not an array or object where the path needs one, gives nothing:
    /// the table types that member itself. The walk is bounded by the value's size,
    /// which JSONLimits.signedData bounds.
    func members(at path: MemberPath) -> [(value: JSONValue, path: String)] {
        var found: [(value: JSONValue, path: String)] = [(self, "")]
        for name in path.components {
            let each = name.hasSuffix("[]")
            let key = each ? String(name.dropLast(2)) : name
            var next: [(value: JSONValue, path: String)] = []
            for (value, at) in found {
                guard let member = value[key] else { continue }
                let named = at.isEmpty ? key : at + "." + key
                if !each {
                    next.append((member, named))
                } else if case .array(let elements) = member {
                    next += elements.enumerated().map { ($1, "\(named)[\($0)]") }
                }
            }
            found = next
        }
        return found
    }

    /// The member at a dotted path (`data.bundleId`), or nil. A name without a dot is
    /// looked up as it is: most reads are of top-level members, and splitting costs more than the look-up.
    public func member(atPath path: String) -> JSONValue? {
        Self.isDotted(path) ? member(at: MemberPath(path)) : self[path]
    }

    /// Whether a path has a '.', read in place (withUTF8Bytes): through `utf8`'s iterator
    /// this cost a twentieth of a stored read (every typed read of every payload asks it).
    static func isDotted(_ path: String) -> Bool {
        path.withUTF8Bytes { $0.contains(UInt8(ascii: ".")) }
    }
}
