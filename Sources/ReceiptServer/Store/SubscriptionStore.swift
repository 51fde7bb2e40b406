import Logging
import ReceiptCore

/// Where `receipt serve` keeps what App Store Server Notifications (and the App Store
/// Server API) told it: rows the core made from verified payloads (ReceivedNotification,
/// StoredTransaction, StoredRenewalInfo). A store writes and looks up; what the rows
/// mean now (SubscriptionState, Entitlements, verifyReceipt's merge) is the core's.
///
/// Every write is durable when it returns (the server answers Apple 200 only then),
/// idempotent, and keeps the newer copy by the core's order (`supersedes`), so that
/// redelivery and out-of-order delivery converge. Implementations: SQLite (one file)
/// and PostgreSQL (several servers on one database).
protocol SubscriptionStore: Sendable {
    /// Runs what the store needs in the background (PostgreSQL's connection pool)
    /// until the task is cancelled; returns at once when it needs nothing.
    func run() async
    /// Creates or upgrades the schema (StoreSchema); throws StoreSchema.TooNew for a
    /// database of a later version. Called once, with `run()` running, before any other call.
    func migrate() async throws
    /// Stores a notification and what it carries. False when its UUID was stored
    /// before: nothing is written again.
    func record(_ notification: ReceivedNotification) async throws -> Bool
    /// Stores transactions and renewal infos learnt otherwise (the App Store Server API).
    func record(transactions: [StoredTransaction], renewalInfos: [StoredRenewalInfo]) async throws
    /// The signed transactions and renewal infos (JWS, at most one per subscription)
    /// of these subscriptions, in one read.
    func subscriptions(_ originalTransactionIDs: [String]) async throws -> StoredSubscriptions
    /// The signed transactions (JWS) bought with this app account token (lower-cased).
    func transactions(appAccountToken: String) async throws -> [String]
    /// The value saved under `key` (a sync's resume point), or nil.
    func setting(_ key: String) async throws -> String?
    func setSetting(_ key: String, _ value: String) async throws
    func close() async throws
}

/// What a store holds of some subscriptions, as the JWS it keeps.
struct StoredSubscriptions: Sendable {
    var transactions: [String] = []
    var renewalInfos: [String] = []
}

/// Opens the store `location` names: a postgres:// URL, or else an SQLite file path.
/// Not yet migrated: see `SubscriptionStore.migrate`.
func makeSubscriptionStore(location: StoreLocation, logger: Logger) async throws -> any SubscriptionStore {
    if location.isPostgres {
        var url = try PostgresLocation(location.text)
        url.password = location.password
        return PostgresSubscriptionStore.make(location: url, logger: logger)
    }
    return try await SQLiteSubscriptionStore.open(path: location.text, logger: logger)
}

/// The tables, one schema for both databases (types and statements both accept).
/// Versioned: `schema_version` holds the version applied; a server applies the
/// versions after it in order at start, and refuses a database newer than it knows.
enum StoreSchema {
    static let migrations: [[String]] = [
        // Version 1.
        [
            """
            CREATE TABLE transactions (transaction_id TEXT PRIMARY KEY, original_transaction_id TEXT NOT NULL,
              product_id TEXT, app_account_token TEXT, signed_date BIGINT NOT NULL, jws TEXT NOT NULL)
            """,
            "CREATE INDEX transactions_by_original ON transactions (original_transaction_id)",
            "CREATE INDEX transactions_by_account ON transactions (app_account_token)",
            """
            CREATE TABLE renewal_infos (original_transaction_id TEXT PRIMARY KEY, signed_date BIGINT NOT NULL,
              jws TEXT NOT NULL)
            """,
            """
            CREATE TABLE notifications (notification_uuid TEXT PRIMARY KEY, notification_type TEXT NOT NULL,
              subtype TEXT, signed_date BIGINT NOT NULL, original_transaction_id TEXT, received_at BIGINT NOT NULL)
            """,
            "CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        ],
    ]
    static var version: Int { migrations.count }

    /// The upserts: a copy replaces the stored one only when it supersedes it (the
    /// core's order, as a row-value comparison; `collate` makes text compare bytewise).
    static func upsertTransaction(placeholders p: [String], collate: String = "") -> String {
        """
        INSERT INTO transactions (transaction_id, original_transaction_id, product_id, app_account_token, signed_date, jws)
        VALUES (\(p[0]), \(p[1]), \(p[2]), \(p[3]), \(p[4]), \(p[5]))
        ON CONFLICT (transaction_id) DO UPDATE SET original_transaction_id = excluded.original_transaction_id,
          product_id = excluded.product_id, app_account_token = excluded.app_account_token,
          signed_date = excluded.signed_date, jws = excluded.jws
        WHERE (excluded.signed_date, excluded.jws\(collate)) > (transactions.signed_date, transactions.jws\(collate))
        """
    }

    static func upsertRenewalInfo(placeholders p: [String], collate: String = "") -> String {
        """
        INSERT INTO renewal_infos (original_transaction_id, signed_date, jws) VALUES (\(p[0]), \(p[1]), \(p[2]))
        ON CONFLICT (original_transaction_id) DO UPDATE SET signed_date = excluded.signed_date, jws = excluded.jws
        WHERE (excluded.signed_date, excluded.jws\(collate)) > (renewal_infos.signed_date, renewal_infos.jws\(collate))
        """
    }

    static func insertNotification(placeholders p: [String]) -> String {
        """
        INSERT INTO notifications (notification_uuid, notification_type, subtype, signed_date, original_transaction_id,
          received_at) VALUES (\(p[0]), \(p[1]), \(p[2]), \(p[3]), \(p[4]), \(p[5]))
        ON CONFLICT (notification_uuid) DO NOTHING
        """
    }

    /// One read of some subscriptions' transactions (kind 0) and renewal infos (kind 1);
    /// `list` is the SQL that stands for the ids (`IN (…)`, `= ANY(…)`), used twice.
    static func subscriptionsQuery(_ list: String) -> String {
        """
        SELECT kind, jws FROM (
          SELECT 0 AS kind, signed_date, jws FROM transactions WHERE original_transaction_id \(list)
          UNION ALL
          SELECT 1 AS kind, signed_date, jws FROM renewal_infos WHERE original_transaction_id \(list)
        ) AS found ORDER BY kind, signed_date
        """
    }

    /// A database whose schema is newer than this server's.
    struct TooNew: Error, CustomStringConvertible {
        let found: Int
        var description: String {
            "the store's schema is version \(found); this receipt serve knows versions up to \(StoreSchema.version): upgrade it"
        }
    }
}
