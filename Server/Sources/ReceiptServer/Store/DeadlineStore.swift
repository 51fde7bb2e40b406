import ReceiptCore

/// A store whose every operation gives up after `seconds` (Deadline.DeadlineExceeded):
/// a database that has gone away makes requests fail (503, or 21005 on /verifyReceipt)
/// instead of waiting on its connection pool's retries, and lets the server shut down.
/// A point read the store answers at once (ImmediatePointReads) waits on nothing, so it
/// is made without one: a deadline costs two child tasks and a timer.
struct DeadlineStore: SubscriptionStore {
    let inner: any SubscriptionStore
    let seconds: Int
    private let immediate: (any ImmediatePointReads)?

    init(inner: any SubscriptionStore, seconds: Int) {
        self.init(inner: inner, seconds: seconds, immediate: inner as? any ImmediatePointReads)
    }

    private init(inner: any SubscriptionStore, seconds: Int, immediate: (any ImmediatePointReads)?) {
        self.inner = inner
        self.seconds = seconds
        self.immediate = immediate
    }

    /// This store without its reads at once: every read goes to the inner store's readers.
    /// For a caller that made the read at once itself and had it handed on.
    var handingOn: DeadlineStore { DeadlineStore(inner: inner, seconds: seconds, immediate: nil) }

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
        if let found = try immediate?.subscriptionsAtOnce(originalTransactionIDs, transactionsEach: transactionsEach) { return found }
        return try await bounded { try await inner.subscriptions(originalTransactionIDs, transactionsEach: transactionsEach) }
    }
    func transactions(appAccountToken: String, after cursor: StoreCursor?, limit: Int) async throws -> StoredPage {
        if let page = try immediate?.transactionsAtOnce(appAccountToken: appAccountToken, after: cursor, limit: limit) { return page }
        return try await bounded { try await inner.transactions(appAccountToken: appAccountToken, after: cursor, limit: limit) }
    }
    func consentRescission(appTransactionID: String) async throws -> StoredConsentRescission? {
        if let found = try immediate?.consentRescissionAtOnce(appTransactionID: appTransactionID) { return found }
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

/// The inner store's reads made at once, when it has them (nil from each when it has not):
/// they wait on nothing, so they need no deadline.
extension DeadlineStore: ImmediatePointReads {
    func subscriptionsAtOnce(_ originalTransactionIDs: [String], transactionsEach: Int) throws -> StoredSubscriptions? {
        try immediate?.subscriptionsAtOnce(originalTransactionIDs, transactionsEach: transactionsEach)
    }
    func transactionsAtOnce(appAccountToken: String, after cursor: StoreCursor?, limit: Int) throws -> StoredPage? {
        try immediate?.transactionsAtOnce(appAccountToken: appAccountToken, after: cursor, limit: limit)
    }
    func consentRescissionAtOnce(appTransactionID: String) throws -> StoredConsentRescission?? {
        try immediate?.consentRescissionAtOnce(appTransactionID: appTransactionID)
    }
}
