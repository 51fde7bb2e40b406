import ReceiptCore
import ReceiptServerAPIClient

/// Fills the store's gaps from the App Store Server API (ReceiptServerAPIClient; the
/// requests, checks and verification are ReceiptCore's, the rows ServerAPIStoreRows'):
/// a subscription asked about that no notification told of, and `receipt sync`, which
/// pulls the notification history and the affected transaction histories.
struct StoreCatchUp: Sendable {
    let client: AppStoreServerAPIClient
    let store: any SubscriptionStore
    let limiter = CatchUpLimiter()

    /// At most this many pages of one transaction history (Apple's pages hold 20).
    static let maxHistoryPages = 500

    enum Outcome: Sendable {
        case stored(rows: Int)
        /// Apple does not know the id (its 404), or another look-up of it just found nothing.
        case unknown
        /// Too many look-ups at once: the caller should ask again later.
        case busy
    }

    /// A subscription's whole transaction history and its status, into the store.
    /// Look-ups of one id at a time are joined; a miss is remembered for ten minutes.
    func fetch(originalTransactionID id: String) async throws -> Outcome {
        try await limiter.run(id) {
            var rows = 0
            do {
                rows += try await pull("get_transaction_history", ["transactionId": .string(id)], maxPages: Self.maxHistoryPages)
                rows += try await pull("get_all_subscription_statuses", ["transactionId": .string(id)], maxPages: 1)
            } catch let error as ServerAPIError where error.failure.httpStatus == 404 {
                return .unknown
            }
            return .stored(rows: rows)
        }
    }

    /// Every page of `call` into the store; the rows written.
    @discardableResult
    func pull(_ call: String, _ arguments: [String: JSONValue], maxPages: Int) async throws -> Int {
        var rows = 0, pages = 0
        for try await page in client.pages(call, arguments) {
            rows += try await keep(page).count
            pages += 1
            if pages >= maxPages { break }
        }
        return rows
    }

    /// One answer's rows into the store.
    func keep(_ page: ServerAPISuccess) async throws -> ServerAPIStoreRows {
        let found = try ServerAPIStoreRows(page)
        for notification in found.notifications { _ = try await store.record(notification) }
        try await store.record(transactions: found.transactions, renewalInfos: found.renewalInfos)
        return found
    }
}

/// Keeps look-ups from becoming a way to make the server call Apple without bound:
/// one look-up per id at a time, `maxConcurrent` in all (past it: busy), and ids Apple
/// did not know remembered for `missMemorySeconds` (at most `maxMisses`, forgotten all
/// at once when full).
actor CatchUpLimiter {
    static let maxConcurrent = 4
    static let missMemorySeconds: Int64 = 600
    static let maxMisses = 10_000
    private var inFlight: [String: Task<StoreCatchUp.Outcome, Error>] = [:]
    private var misses: [String: Int64] = [:]

    func run(_ id: String, _ work: @escaping @Sendable () async throws -> StoreCatchUp.Outcome) async throws -> StoreCatchUp.Outcome {
        let now = ReceiptVerifier.currentMilliseconds() / 1000
        if let missed = misses[id], now - missed < Self.missMemorySeconds { return .unknown }
        if let running = inFlight[id] { return try await running.value }
        guard inFlight.count < Self.maxConcurrent else { return .busy }
        let task = Task { try await work() }
        inFlight[id] = task
        defer { inFlight[id] = nil }
        let outcome = try await task.value
        if case .unknown = outcome {
            if misses.count >= Self.maxMisses { misses.removeAll() }
            misses[id] = now
        }
        return outcome
    }
}

