import ReceiptCore

/// A store whose every operation gives up after `seconds` (Deadline.DeadlineExceeded):
/// a database that has gone away makes requests fail (503, or 21005 on /verifyReceipt)
/// instead of waiting on its connection pool's retries, and lets the server shut down.
/// (A point read SQLite answers at once waits on nothing and is made without one, by
/// StorePointReads: a deadline costs two child tasks and a timer.)
struct DeadlineStore: SubscriptionStore {
    let inner: any SubscriptionStore
    let seconds: Int

    private func bounded<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        try await Deadline.within(seconds: seconds, work)
    }

    func run() async { await inner.run() }
    func migrate() async throws { try await inner.migrate() }
    func record(_ notification: ReceivedNotification) async throws -> Bool { try await bounded { try await inner.record(notification) } }
    func record(transactions: [StoredTransaction], renewalInfos: [StoredRenewalInfo]) async throws {
        try await bounded { try await inner.record(transactions: transactions, renewalInfos: renewalInfos) }
    }
    func subscriptions(_ originalTransactionIDs: [String], transactionsEach: Int) async throws -> StoredSubscriptions {
        return try await bounded { try await inner.subscriptions(originalTransactionIDs, transactionsEach: transactionsEach) }
    }
    func transactions(appAccountToken: String, after cursor: StoreCursor?, limit: Int) async throws -> StoredPage {
        return try await bounded { try await inner.transactions(appAccountToken: appAccountToken, after: cursor, limit: limit) }
    }
    func consentRescission(appTransactionID: String) async throws -> StoredConsentRescission? {
        return try await bounded { try await inner.consentRescission(appTransactionID: appTransactionID) }
    }
    func setting(_ key: String) async throws -> String? { try await bounded { try await inner.setting(key) } }
    func setSetting(_ key: String, _ value: String) async throws { try await bounded { try await inner.setSetting(key, value) } }
    func ping() async throws { try await bounded { try await inner.ping() } }
    func close() async throws { try await inner.close() }
    func withStatements<T: Sendable>(transaction: Bool, _ work: @escaping @Sendable (any StoreStatements) async throws -> T) async throws -> T {
        try await bounded { try await inner.withStatements(transaction: transaction, work) }
    }
}

