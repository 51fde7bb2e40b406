/// The values a store keeps beside each signed transaction and renewal info, as
/// columns, so that reads and figures filter, sort and add up without decoding the
/// JWS again. The JWS stays the source of truth: each column is derived from it here,
/// and only here (`FactColumn.value(in:)`), when a row is accepted, when a store
/// migrates rows it held before the columns existed, and when a check re-derives them.
///
/// Each column is one member of Apple's payload, by its name in Apple's model, as the
/// payload carries it: dates in epoch milliseconds, booleans 1 or 0, `price` in
/// milliunits of `currency`. A member that is absent or of another type is NULL.
public struct FactColumn: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case date, integer, text, boolean
    }

    /// The column's name in the store.
    public let name: String
    /// The payload member it holds (Apple's name).
    public let member: String
    public let kind: Kind

    /// The column's SQL type, one word for SQLite and PostgreSQL.
    public var sqlType: String { kind == .text ? "TEXT" : "BIGINT" }

    /// The column's value in a payload.
    public func value(in payload: SignedPayload) -> StoredFact {
        let value: StoredFact?
        switch kind {
        case .date: value = payload.date(member).map(StoredFact.integer)
        case .integer: value = payload.integer(member).map(StoredFact.integer)
        case .text: value = payload.string(member).map(StoredFact.text)
        case .boolean: value = payload.boolean(member).map { .integer($0 ? 1 : 0) }
        }
        return value ?? .null
    }
}

/// One column's value.
public enum StoredFact: Sendable, Equatable, Hashable {
    case text(String)
    case integer(Int64)
    case null
}

public enum StoredFacts {
    /// A signed transaction's columns (JWSTransactionDecodedPayload).
    public static let transactionColumns: [FactColumn] = [
        FactColumn(name: "purchase_date", member: "purchaseDate", kind: .date),
        FactColumn(name: "original_purchase_date", member: "originalPurchaseDate", kind: .date),
        FactColumn(name: "expires_date", member: "expiresDate", kind: .date),
        FactColumn(name: "revocation_date", member: "revocationDate", kind: .date),
        FactColumn(name: "revocation_reason", member: "revocationReason", kind: .integer),
        FactColumn(name: "revocation_type", member: "revocationType", kind: .text),
        FactColumn(name: "revocation_percentage", member: "revocationPercentage", kind: .integer),
        FactColumn(name: "product_type", member: "type", kind: .text),
        FactColumn(name: "environment", member: "environment", kind: .text),
        FactColumn(name: "in_app_ownership_type", member: "inAppOwnershipType", kind: .text),
        FactColumn(name: "transaction_reason", member: "transactionReason", kind: .text),
        FactColumn(name: "is_upgraded", member: "isUpgraded", kind: .boolean),
        FactColumn(name: "offer_type", member: "offerType", kind: .integer),
        FactColumn(name: "offer_discount_type", member: "offerDiscountType", kind: .text),
        FactColumn(name: "offer_period", member: "offerPeriod", kind: .text),
        FactColumn(name: "price", member: "price", kind: .integer),
        FactColumn(name: "currency", member: "currency", kind: .text),
        FactColumn(name: "storefront", member: "storefront", kind: .text),
        FactColumn(name: "bundle_id", member: "bundleId", kind: .text),
    ]

    /// A signed renewal info's columns (JWSRenewalInfoDecodedPayload).
    public static let renewalInfoColumns: [FactColumn] = [
        FactColumn(name: "auto_renew_status", member: "autoRenewStatus", kind: .integer),
        FactColumn(name: "auto_renew_product_id", member: "autoRenewProductId", kind: .text),
        FactColumn(name: "product_id", member: "productId", kind: .text),
        FactColumn(name: "expiration_intent", member: "expirationIntent", kind: .integer),
        FactColumn(name: "is_in_billing_retry_period", member: "isInBillingRetryPeriod", kind: .boolean),
        FactColumn(name: "grace_period_expires_date", member: "gracePeriodExpiresDate", kind: .date),
        FactColumn(name: "renewal_date", member: "renewalDate", kind: .date),
        FactColumn(name: "renewal_price", member: "renewalPrice", kind: .integer),
        FactColumn(name: "currency", member: "currency", kind: .text),
        FactColumn(name: "environment", member: "environment", kind: .text),
    ]

    /// The columns of a payload's kind, nil for a kind a store keeps no facts of.
    public static func columns(of kind: SignedPayloadKind) -> [FactColumn]? {
        switch kind {
        case .transaction: transactionColumns
        case .renewalInfo: renewalInfoColumns
        default: nil
        }
    }

    /// The dates a store takes: within 2^53 milliseconds (about 285,000 years) of 1970, so that
    /// no difference of two (a period's length) or day of one passes 64 bits in the figures'
    /// SQL. Apple signs real instants: a date past these comes from no App Store.
    public static let storableDates: ClosedRange<Int64> = -(1 << 53)...(1 << 53)

    /// The name of the first date column of `columns` whose value in `facts` (in the same order)
    /// is outside `storableDates`; nil when every date is within them.
    public static func unstorableDate(in facts: [StoredFact], of columns: [FactColumn]) -> String? {
        zip(columns, facts).first { column, fact in
            guard column.kind == .date, case .integer(let date) = fact else { return false }
            return !storableDates.contains(date)
        }?.0.name
    }

    /// A payload's values, in the order of its kind's columns (empty for other kinds).
    public static func values(of payload: SignedPayload) -> [StoredFact] {
        (columns(of: payload.kind) ?? []).map { $0.value(in: payload) }
    }
}
