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
    /// Stores a notification and what it carries (a transaction, a renewal info, a
    /// withdrawal of consent). False when its UUID was stored before: nothing is written again.
    func record(_ notification: ReceivedNotification) async throws -> Bool
    /// Stores transactions and renewal infos learnt otherwise (the App Store Server API).
    func record(transactions: [StoredTransaction], renewalInfos: [StoredRenewalInfo]) async throws
    /// The signed transactions (the `transactionsEach` most recently signed of each
    /// subscription, StoreSchema.maxTransactionsPerSubscription at most) and renewal infos
    /// (JWS, at most one per subscription) of these subscriptions, in one read.
    func subscriptions(_ originalTransactionIDs: [String], transactionsEach: Int) async throws -> StoredSubscriptions
    /// One page of the signed transactions (JWS) bought with this app account token
    /// (lower-cased), most recently signed first: at most `limit` after `cursor`, and
    /// the cursor of the next page when there is one.
    func transactions(appAccountToken: String, after cursor: StoreCursor?, limit: Int) async throws -> StoredPage
    /// The withdrawal of consent stored for this app transaction id, or nil.
    func consentRescission(appTransactionID: String) async throws -> StoredConsentRescission?
    /// The value saved under `key` (a sync's resume point), or nil.
    func setting(_ key: String) async throws -> String?
    func setSetting(_ key: String, _ value: String) async throws
    /// Answers when the database does (one trivial read): /readyz.
    func ping() async throws
    func close() async throws
    /// `work` on one connection; inside a transaction (committed when it returns, rolled
    /// back when it throws) when `transaction` is true. The outbox's operations use it.
    func withStatements<T: Sendable>(transaction: Bool, _ work: @escaping @Sendable (any StoreStatements) async throws -> T) async throws -> T
}
