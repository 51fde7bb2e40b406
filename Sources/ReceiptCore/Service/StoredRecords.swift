/// What a store keeps of App Store news, as rows: each signed payload as its JWS
/// (what Apple signed, so a reader can check it again) and the few values the store
/// looks it up by. Made by the core from verified payloads only
/// (`ReceivedNotification`, `StoredTransaction(verified:)`); a store writes and
/// reads them and decides nothing.
///
/// Out-of-order delivery converges because every store applies one rule, the
/// order `supersedes` gives: a later signing date wins; at equal dates the greater
/// JWS text wins, so that two copies signed in the same millisecond end the same
/// way whatever order they arrive in. A store applies it in its write statement
/// (SQL's row-value comparison `(signed_date, jws) > (…)`), atomically.
public struct StoredTransaction: Sendable, Equatable {
    public let transactionID: String
    public let originalTransactionID: String
    public let productID: String?
    /// Lower-cased, as Apple's offer signatures read it; nil when the purchase named none,
    /// or named something that is no UUID (Apple's model, and StoreKit's purchase option,
    /// make it one): such a value is never looked up, and as a key it could exceed what a
    /// database indexes (PostgreSQL's B-tree takes about 2.7 kB), failing the write for good.
    public let appAccountToken: String?
    public let signedDate: Int64
    public let jws: String
    /// The values of StoredFacts.transactionColumns, in their order.
    public let facts: [StoredFact]

    /// A signed transaction already verified (its verdict is the caller's to check);
    /// nil for another kind of payload or one without the ids and date a row needs.
    public init?(verified payload: SignedPayload) {
        guard payload.kind == .transaction, let id = payload.transactionID, let original = payload.originalTransactionID,
              let signed = payload.signingDate else { return nil }
        transactionID = id
        originalTransactionID = original
        productID = payload.productID
        appAccountToken = payload.string("appAccountToken").flatMap { UUIDText.isWellFormed($0) ? $0.lowercased() : nil }
        signedDate = signed
        jws = payload.compactSerialization
        facts = StoredFacts.values(of: payload)
    }

    /// A row read back from a store (verified when it arrived); nil when its JWS no
    /// longer decodes to a transaction a row can hold (a store edited by hand).
    public init?(storedJWS jws: String) {
        guard let payload = try? SignedPayload.decodeVerifiedBefore(jws, as: .transaction) else { return nil }
        self.init(verified: payload)
    }

    /// A store's columns of a transaction, in the order of `columnValues`: its ids, what it is looked
    /// up by, its JWS, then its facts (StoredFacts). The one list a store writes and `receipt audit` checks.
    public static let columnNames = ["transaction_id", "original_transaction_id", "product_id", "app_account_token",
                                     "signed_date", "jws"] + StoredFacts.transactionColumns.map(\.name)

    public var columnValues: [StoredFact] {
        [.text(transactionID), .text(originalTransactionID), productID.map(StoredFact.text) ?? .null,
         appAccountToken.map(StoredFact.text) ?? .null, .integer(signedDate), .text(jws)] + facts
    }

    /// The purchase date among its facts (nil when it has none): the order of a subscription's periods.
    public var purchaseDate: Int64? {
        guard let index = StoredFacts.transactionColumns.firstIndex(where: { $0.name == "purchase_date" }),
              index < facts.count, case .integer(let date) = facts[index] else { return nil }
        return date
    }

    /// True when this copy should replace `other` (the same transaction id).
    public func supersedes(_ other: StoredTransaction) -> Bool {
        StoredOrder.supersedes((signedDate, jws), (other.signedDate, other.jws))
    }

    /// True when this copy tells nothing `other` did not: the same transaction with the same
    /// facts, whenever each was signed (Apple signs every answer anew, so two copies of an
    /// unchanged transaction differ in their signing date and JWS alone).
    public func tellsNothingNew(beside other: StoredTransaction) -> Bool {
        transactionID == other.transactionID && originalTransactionID == other.originalTransactionID
            && productID == other.productID && appAccountToken == other.appAccountToken && facts == other.facts
    }
}

/// The renewal info of one subscription (its original transaction id): only the
/// latest signed is kept, by the same rule as transactions.
public struct StoredRenewalInfo: Sendable, Equatable {
    public let originalTransactionID: String
    public let signedDate: Int64
    public let jws: String
    /// The values of StoredFacts.renewalInfoColumns, in their order.
    public let facts: [StoredFact]

    public init?(verified payload: SignedPayload) {
        guard payload.kind == .renewalInfo, let original = payload.originalTransactionID,
              let signed = payload.signingDate else { return nil }
        originalTransactionID = original
        signedDate = signed
        jws = payload.compactSerialization
        facts = StoredFacts.values(of: payload)
    }

    /// A row read back from a store, as StoredTransaction(storedJWS:).
    public init?(storedJWS jws: String) {
        guard let payload = try? SignedPayload.decodeVerifiedBefore(jws, as: .renewalInfo) else { return nil }
        self.init(verified: payload)
    }

    /// As StoredTransaction.columnNames.
    public static let columnNames = ["original_transaction_id", "signed_date", "jws"] + StoredFacts.renewalInfoColumns.map(\.name)

    public var columnValues: [StoredFact] { [.text(originalTransactionID), .integer(signedDate), .text(jws)] + facts }

    public func supersedes(_ other: StoredRenewalInfo) -> Bool {
        StoredOrder.supersedes((signedDate, jws), (other.signedDate, other.jws))
    }

    /// As StoredTransaction.tellsNothingNew(beside:).
    public func tellsNothingNew(beside other: StoredRenewalInfo) -> Bool {
        originalTransactionID == other.originalTransactionID && facts == other.facts
    }
}

/// The one order of copies (see StoredTransaction).
enum StoredOrder {
    static func supersedes(_ candidate: (Int64, String), _ kept: (Int64, String)) -> Bool {
        // Byte order, as SQLite's BINARY collation and PostgreSQL's "C" compare text.
        candidate.0 != kept.0 ? candidate.0 > kept.0 : kept.1.utf8.lexicographicallyPrecedes(candidate.1.utf8)
    }
}

/// A customer's consent for the app withdrawn (App Store Server Notifications'
/// `RESCIND_CONSENT`: a parent or guardian took back the consent a minor's use of the
/// app needs): keyed by the app transaction's `appTransactionId` (one per customer
/// and app), with the notification that told it and the signed app transaction it
/// carried (`appData.signedAppTransactionInfo`). Apple sends no notification that
/// gives consent back, so one row is the whole state: rescinded since `signedDate`.
/// Copies converge by the same order as transactions (a later notification wins).
public struct StoredConsentRescission: Sendable, Equatable {
    public let appTransactionID: String
    public let notificationUUID: String
    /// When the notification was signed: the rescission is known from then.
    public let signedDate: Int64
    /// The signed app transaction (JWS), as Apple signed it.
    public let jws: String

    /// From a verified notification's UUID and date and its verified app transaction;
    /// nil for another kind of payload or one without `appTransactionId`.
    init?(notificationUUID: String, signedDate: Int64, appTransaction payload: SignedPayload) {
        guard payload.kind == .appTransaction, let id = payload.string("appTransactionId"), !id.isEmpty else { return nil }
        appTransactionID = id
        self.notificationUUID = notificationUUID
        self.signedDate = signedDate
        jws = payload.compactSerialization
    }

    /// A row read back from a store (verified when it arrived); nil when its JWS no
    /// longer decodes to an app transaction with an id (a store edited by hand).
    public init?(storedJWS jws: String, notificationUUID: String, signedDate: Int64) {
        guard let payload = try? SignedPayload.decodeVerifiedBefore(jws, as: .appTransaction) else { return nil }
        self.init(notificationUUID: notificationUUID, signedDate: signedDate, appTransaction: payload)
    }

    /// As StoredTransaction.columnNames.
    public static let columnNames = ["app_transaction_id", "notification_uuid", "signed_date", "jws"]

    public var columnValues: [StoredFact] { [.text(appTransactionID), .text(notificationUUID), .integer(signedDate), .text(jws)] }

    public func supersedes(_ other: StoredConsentRescission) -> Bool {
        StoredOrder.supersedes((signedDate, jws), (other.signedDate, other.jws))
    }
}
