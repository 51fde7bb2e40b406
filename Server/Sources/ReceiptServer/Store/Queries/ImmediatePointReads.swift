import ReceiptCore

/// The point reads a store can answer at once, on the caller's thread, waiting on nothing
/// (SQLite's quick reads). Each answers nil when it cannot: the caller then makes the
/// read of SubscriptionStore of the same name.
protocol ImmediatePointReads: Sendable {
    func subscriptionsAtOnce(_ originalTransactionIDs: [String], transactionsEach: Int) throws -> StoredSubscriptions?
    func transactionsAtOnce(appAccountToken: String, after cursor: StoreCursor?, limit: Int) throws -> StoredPage?
    /// The outer nil: not at once; the inner: no withdrawal of consent is stored.
    func consentRescissionAtOnce(appTransactionID: String) throws -> StoredConsentRescission??
}
