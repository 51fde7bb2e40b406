import ReceiptCore
import ReceiptServerAPIClient

/// Fills the store's gaps from the App Store Server API (ReceiptServerAPIClient; the
/// requests, checks and verification are ReceiptCore's, the rows ServerAPIStoreRows'):
/// a subscription asked about that no notification told of, and `receipt sync`, which
/// pulls the notification history and the affected transaction histories.
struct StoreCatchUp: Sendable {
    let client: AppStoreServerAPIClient
    let store: any SubscriptionStore
    let limiter: CatchUpLimiter

    /// `callsPerMinute`: the App Store Server API calls look-ups may make in any
    /// 60 s (a look-up is at least two: history and status); nil, no budget (sync).
    init(client: AppStoreServerAPIClient, store: any SubscriptionStore, callsPerMinute: Int? = nil) {
        self.client = client
        self.store = store
        limiter = CatchUpLimiter(callsPerMinute: callsPerMinute,
                                 callsPerLookUp: CatchUpLimiter.callsPerLookUp(sandboxFallback: client.sandboxFallback != nil))
    }

    /// At most this many pages of one transaction history (Apple's pages hold 20).
    static let maxHistoryPages = 500
    /// A look-up, every call and retry of it, ends within this many seconds (a caller
    /// waits on it): an API that trickles its answers holds a request no longer.
    static let lookUpSeconds = 20
    /// Each exchange of a look-up, head and body, within this many seconds.
    static let exchangeSeconds: Int64 = 10

    enum Outcome: Sendable {
        case stored(rows: Int)
        /// Apple does not know the id (its 404), or another look-up of it just found nothing.
        case unknown
        /// Too many look-ups at once: the caller should ask again later.
        case busy
    }

    /// A subscription's whole transaction history and its status, into the store,
    /// within `lookUpSeconds`. Look-ups of one id at a time are joined; a miss is
    /// remembered for ten minutes.
    func fetch(originalTransactionID id: String) async throws -> Outcome {
        try await limiter.run(id) {
            try await Deadline.within(seconds: Self.lookUpSeconds) { try await lookUp(id) }
        }
    }

    private func lookUp(_ id: String) async throws -> Outcome {
        var rows = 0
        do {
            // Both calls' first pages were taken from the budget; later pages each take one, or end the history.
            rows += try await pull("get_transaction_history", ["transactionId": .string(id)], maxPages: Self.maxHistoryPages,
                                   budgeted: true)
            rows += try await pull("get_all_subscription_statuses", ["transactionId": .string(id)], maxPages: 1)
        } catch let error as ServerAPIError where error.failure.httpStatus == 404 {
            return .unknown
        }
        return .stored(rows: rows)
    }

    /// Every page of `call` into the store; the rows written.
    @discardableResult
    func pull(_ call: String, _ arguments: [String: JSONValue], maxPages: Int, budgeted: Bool = false) async throws -> Int {
        var rows = 0, pages = 0
        for try await page in client.pages(call, arguments) {
            rows += try await keep(page).count
            pages += 1
            if pages >= maxPages { break }
            if budgeted, page.hasMore, !(await limiter.spend(1)) { break }
        }
        return rows
    }

    /// One answer's rows into the store.
    func keep(_ page: ServerAPISuccess) async throws -> ServerAPIStoreRows {
        let found = try ServerAPIStoreRows(page)
        try await store.record(apiRows: found.notifications, found.transactions, found.renewalInfos)
        return found
    }
}

extension SubscriptionStore {
    /// Rows an App Store Server API answer gave (catch-up, sync, import): each notification as
    /// if delivered, then the transactions and renewal infos together.
    func record(apiRows notifications: [ReceivedNotification], _ transactions: [StoredTransaction],
                _ renewalInfos: [StoredRenewalInfo]) async throws {
        for notification in notifications { _ = try await record(notification) }
        try await record(transactions: transactions, renewalInfos: renewalInfos)
    }
}

/// Keeps look-ups from becoming a way to make the server call Apple without bound:
/// one look-up per id at a time, `maxConcurrent` in all (past it: busy), at most
/// `callsPerMinute` API calls in any 60 s (past it: busy), and ids Apple did not
/// know remembered for `missMemorySeconds` (at most `maxMisses`, forgotten all at
/// once when full).
actor CatchUpLimiter {
    static let maxConcurrent = 4
    static let missMemorySeconds: Int64 = 600
    static let maxMisses = 10_000
    /// The calls one look-up needs at least: the history's first page and the status,
    /// each twice with the sandbox fallback (production's miss, then the sandbox).
    static func callsPerLookUp(sandboxFallback: Bool) -> Int { sandboxFallback ? 4 : 2 }
    private let callsPerLookUp: Int
    private var inFlight: [String: Task<StoreCatchUp.Outcome, Error>] = [:]
    private var misses: [String: Int64] = [:]
    private let callsPerMinute: Int?
    /// When each call of the last 60 s was allowed (at most callsPerMinute entries).
    private var recentCalls: [Int64] = []

    init(callsPerMinute: Int?, callsPerLookUp: Int) {
        self.callsPerMinute = callsPerMinute
        self.callsPerLookUp = callsPerLookUp
    }

    /// Takes `calls` from this minute's budget; false, and nothing taken, when it has not that many left.
    func spend(_ calls: Int) -> Bool {
        guard let callsPerMinute else { return true }
        let now = ReceiptClock.systemNow()
        recentCalls.removeAll { now - $0 >= 60_000 }
        guard recentCalls.count + calls <= callsPerMinute else { return false }
        recentCalls.append(contentsOf: repeatElement(now, count: calls))
        return true
    }

    func run(_ id: String, _ work: @escaping @Sendable () async throws -> StoreCatchUp.Outcome) async throws -> StoreCatchUp.Outcome {
        let now = ReceiptClock.systemNow() / 1000
        if let missed = misses[id], now - missed < Self.missMemorySeconds { return .unknown }
        if let running = inFlight[id] { return try await running.value }
        guard inFlight.count < Self.maxConcurrent, spend(callsPerLookUp) else { return .busy }
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

