import ReceiptCore

/// The store's point reads (one subscription, one page of an account, one consent), each
/// answered now or later: now when SQLite's quick reads make it on the caller's thread,
/// later through the store's readers, within its deadline (PostgreSQL's always are).
/// The one place that decides which: the endpoints ask this, never the quick reads.
struct StorePointReads: Sendable {
    /// The reads that wait, and everything else the store does.
    let store: DeadlineStore
    /// SQLite's quick reads; nil for a store without them.
    private let quick: SQLiteQuickReads?

    init(store: DeadlineStore) {
        self.store = store
        quick = (store.inner as? SQLiteSubscriptionStore)?.quickReads
    }

    // Each makes its `later` closure only when the quick reads handed the read on: one made
    // before would be an allocation on every read answered now.

    /// SubscriptionStore.subscriptions' answer.
    func subscriptions(_ originalTransactionIDs: [String], transactionsEach: Int) throws -> NowOrLater<StoredSubscriptions> {
        guard !originalTransactionIDs.isEmpty else { return .now(StoredSubscriptions()) }  // no statement for no ids
        if let found = try atOnce(.subscriptions(originalTransactionIDs, transactionsEach: transactionsEach)) { return .now(found) }
        return .later { [store] in try await store.subscriptions(originalTransactionIDs, transactionsEach: transactionsEach) }
    }

    /// SubscriptionStore.transactions' answer.
    func transactions(appAccountToken: String, after cursor: StoreCursor?, limit: Int) throws -> NowOrLater<StoredPage> {
        if let page = try atOnce(.accountPage(appAccountToken, after: cursor, limit: limit)) { return .now(page) }
        return .later { [store] in try await store.transactions(appAccountToken: appAccountToken, after: cursor, limit: limit) }
    }

    /// SubscriptionStore.consentRescission's answer (nil now: none is stored).
    func consentRescission(appTransactionID: String) throws -> NowOrLater<StoredConsentRescission?> {
        if let found = try atOnce(.consentRescission(appTransactionID)) { return .now(found) }
        return .later { [store] in try await store.consentRescission(appTransactionID: appTransactionID) }
    }

    /// The read made by the quick reads; nil when there are none or they handed it on.
    private func atOnce<Row, Answer: Sendable>(_ read: SQLitePointRead<Row, Answer>) throws -> Answer? {
        guard let quick else { return nil }
        return try read.atOnce(quick)
    }
}

/// An answer made now, or the rest of the work, which waits (a read through the store's
/// readers, a look-up with the App Store Server API). Why two: with NIO as Swift's global
/// executor, each nonisolated async call on a request's way is a job of its own on the
/// event loop's queue, so an answer the store can read at once is made by plain calls,
/// and the caller awaits only `later`.
enum NowOrLater<Answer: Sendable>: Sendable {
    case now(Answer)
    case later(@Sendable () async throws -> Answer)

    /// The answer, awaiting the rest when there is one (an async call itself).
    func answer() async throws -> Answer {
        switch self {
        case .now(let answer): answer
        case .later(let rest): try await rest()
        }
    }

}
