import Logging
import ReceiptCore
import ReceiptServerAPIClient

/// `receipt import`: fills a store with the subscriptions of a list of original transaction
/// ids (ImportIDList), each one's transaction history and status from the App Store Server
/// API, verified as every answer is (ServerAPIStoreRows), within a budget of calls per
/// second for each of the two endpoints (ImportPacer).
///
/// Resumable: the position (the list's identity, how many ids from its start are done, and
/// the counts so far) is saved in the store every second and at the end, so that a run cut
/// off and started again with the same list goes on from there. Ids between the saved
/// position and the cut are asked again: the store's writes are idempotent, and such an id
/// counts as already current the second time.
extension ReceiptServer {
    public struct ImportSummary: Sendable, Equatable {
        public var total = 0
        /// Ids from the list's start whose import is over (`done` of `total`).
        public var done = 0
        /// Apple's answers told the store something it did not hold.
        public var imported = 0
        /// The store held every transaction and the renewal info as Apple told them.
        public var alreadyCurrent = 0
        /// Apple does not know the id (its 404).
        public var unknownToApple = 0
        /// An answer did not verify (nothing of that answer stored), or Apple called the id malformed.
        public var refused = 0
        public var resumed = false

        /// "DONE IMPORTED CURRENT UNKNOWN REFUSED", as saved after the list's identity.
        var saved: String { "\(done) \(imported) \(alreadyCurrent) \(unknownToApple) \(refused)" }

        init(total: Int) { self.total = total }

        init?(saved text: Substring, total: Int) {
            let numbers = text.split(separator: " ").compactMap { Int($0) }
            // Each count at most the ids done, so that their sum (at most five times the list) cannot overflow.
            guard numbers.count == 5, numbers[0] <= total, numbers.allSatisfy({ 0 <= $0 && $0 <= numbers[0] }),
                  numbers[1...].reduce(0, +) == numbers[0] else { return nil }
            self.total = total
            (done, imported, alreadyCurrent, unknownToApple, refused) = (numbers[0], numbers[1], numbers[2], numbers[3], numbers[4])
            resumed = true
        }
    }

    /// What an import tells as it goes: the summary so far (about once a second), or an id refused.
    public enum ImportProgress: Sendable {
        case position(ImportSummary)
        case refused(id: String, reason: String)
    }

    static let importPositionKey = "import.position"
    /// Ids asked about at once: enough that two endpoints at Apple's 50 calls a second each stay
    /// busy at a few hundred milliseconds an answer.
    static let importConcurrency = 32

    public static func importSubscriptions(storeLocation: StoreLocation, api: ServerAPIClient, list: ImportIDList,
                                           callsPerSecond: Int, logger: Logger,
                                           progress: @escaping @Sendable (ImportProgress) -> Void) async throws -> ImportSummary {
        try await withStore(storeLocation, logger: logger) { store in
            let importer = StoreImporter(client: AppStoreServerAPIClient(api), store: store,
                                         pacer: ImportPacer(callsPerSecond: callsPerSecond), progress: progress)
            return try await importer.run(list)
        }
    }
}

/// One import's work (ReceiptServer.importSubscriptions).
struct StoreImporter: Sendable {
    let client: AppStoreServerAPIClient
    let store: any SubscriptionStore
    let pacer: ImportPacer
    let progress: @Sendable (ReceiptServer.ImportProgress) -> Void

    enum Outcome: Sendable {
        case imported, alreadyCurrent, unknownToApple
        case refused(String)
    }

    func run(_ list: ImportIDList) async throws -> ReceiptServer.ImportSummary {
        let start = try await savedPosition(of: list)
        let tally = ImportTally(start)
        progress(.position(start))
        do {
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask {
                    // The position saved and told once a second while the workers run.
                    while !Task.isCancelled {
                        try await Task.sleep(for: .seconds(1))
                        try await save(await tally.summary, of: list)
                    }
                }
                let workers = min(ReceiptServer.importConcurrency, max(1, list.ids.count - start.done))
                for _ in 0..<workers {
                    tasks.addTask {
                        while let index = await tally.next() {
                            // Another worker's failure cancels this one: an id cut short is not done.
                            try Task.checkCancellation()
                            let id = list.ids[index]
                            let outcome = try await importOne(id)
                            if case .refused(let reason) = outcome { progress(.refused(id: id, reason: reason)) }
                            await tally.finish(index, outcome)
                        }
                    }
                }
                // The workers end when the list does (or the first error ends them all); then the saver.
                for _ in 0..<workers { try await tasks.next() }
                tasks.cancelAll()
            }
        } catch {
            try? await save(await tally.summary, of: list)
            throw error
        }
        let summary = await tally.summary
        guard summary.done == summary.total else {  // cannot happen: every worker ran to the list's end
            try await save(summary, of: list)
            throw CancellationError()
        }
        try await store.setSetting(ReceiptServer.importPositionKey, "")
        progress(.position(summary))
        return summary
    }

    /// Where a run of this list stopped (its counts), or the start: a position saved for another list is dropped.
    private func savedPosition(of list: ImportIDList) async throws -> ReceiptServer.ImportSummary {
        let saved = try await store.setting(ReceiptServer.importPositionKey) ?? ""
        let parts = saved.split(separator: " ", maxSplits: 1)
        if parts.count == 2, parts[0] == list.identity,
           let summary = ReceiptServer.ImportSummary(saved: parts[1], total: list.ids.count) {
            return summary
        }
        return ReceiptServer.ImportSummary(total: list.ids.count)
    }

    private func save(_ summary: ReceiptServer.ImportSummary, of list: ImportIDList) async throws {
        try await store.setSetting(ReceiptServer.importPositionKey, "\(list.identity) \(summary.saved)")
        progress(.position(summary))
    }

    /// Rows gathered before a write, at most: a subscription's answers are written together
    /// (one transaction, not one per answer), a long history in parts of about this many.
    static let rowsPerWrite = 200

    /// One subscription: its transaction history, every page, then its status; their rows
    /// written together when they tell the store something new.
    func importOne(_ id: String) async throws -> Outcome {
        var rows = ImportRows()
        var changed = false
        do {
            var pages = 0
            for try await page in client.pages("get_transaction_history", ["transactionId": .string(id)],
                                               pace: { try await pacer.wait(.history) }) {
                try rows.add(page)
                if rows.transactions.count >= Self.rowsPerWrite { changed = try await rows.write(into: store) || changed }
                pages += 1
                if pages >= StoreCatchUp.maxHistoryPages { break }
            }
            // A stream cut short by cancellation ends as if it were whole: not so this id.
            try Task.checkCancellation()
            for try await page in client.pages("get_all_subscription_statuses", ["transactionId": .string(id)],
                                               pace: { try await pacer.wait(.statuses) }) {
                try rows.add(page)
                break
            }
            try Task.checkCancellation()
            changed = try await rows.write(into: store) || changed
        } catch let refused as ServerAPIError where refused.failure.saysTransactionUnknown {
            return .unknownToApple
        } catch let refused as ServerAPIError where refused.failure.saysTransactionIDInvalid {
            // Apple's word on this id alone, not on the credentials, the app or the service (those stop the import).
            return .refused("Apple: \(refused.failure.summary)")
        } catch let refused as ReceiptError {
            return .refused("\(refused.status.name): \(refused.detail)")
        } catch let refused as StoreRowRefused {  // a row no store can hold: sending it again cannot help
            return .refused("STORE_REFUSED: \(refused)")
        }
        return changed ? .imported : .alreadyCurrent
    }
}

/// A subscription's verified rows on their way to the store.
private struct ImportRows {
    var transactions: [StoredTransaction] = []
    var renewalInfos: [StoredRenewalInfo] = []
    var notifications: [ReceivedNotification] = []

    mutating func add(_ page: ServerAPISuccess) throws(ReceiptError) {
        let rows = try ServerAPIStoreRows(page)
        transactions += rows.transactions
        renewalInfos += rows.renewalInfos
        notifications += rows.notifications
    }

    /// The rows gathered into the store, in one transaction, unless the store holds each as
    /// it is told already (a status names every subscription group's, so each subscription
    /// named is read); whether written. Nothing gathered after.
    mutating func write(into store: any SubscriptionStore) async throws -> Bool {
        defer { (transactions, renewalInfos, notifications) = ([], [], []) }
        guard notifications.isEmpty else { return try await record(into: store) }
        let named = Set(transactions.map(\.originalTransactionID) + renewalInfos.map(\.originalTransactionID)).sorted()
        guard !named.isEmpty else { return false }
        let held = HeldRows(try await store.subscriptions(named, transactionsEach: StoreSchema.maxTransactionsPerSubscription))
        guard held.hasAll(transactions, renewalInfos) else { return try await record(into: store) }
        return false
    }

    private func record(into store: any SubscriptionStore) async throws -> Bool {
        try await store.record(apiRows: notifications, transactions, renewalInfos)
        return true
    }
}

/// The rows the store holds of some subscriptions, by key.
private struct HeldRows {
    var transactions: [String: StoredTransaction] = [:]
    var renewalInfos: [String: StoredRenewalInfo] = [:]

    init(_ held: StoredSubscriptions) {
        for jws in held.transactions {
            if let row = StoredTransaction(storedJWS: jws) { transactions[row.transactionID] = row }
        }
        for jws in held.renewalInfos {
            if let row = StoredRenewalInfo(storedJWS: jws) { renewalInfos[row.originalTransactionID] = row }
        }
    }

    /// Whether the store holds each of these rows as it tells it.
    func hasAll(_ told: [StoredTransaction], _ toldRenewals: [StoredRenewalInfo]) -> Bool {
        told.allSatisfy { row in transactions[row.transactionID].map(row.tellsNothingNew) ?? false }
            && toldRenewals.allSatisfy { row in renewalInfos[row.originalTransactionID].map(row.tellsNothingNew) ?? false }
    }
}

/// The ids handed to workers, in the list's order, and the counts: `done` is how many ids
/// from the list's start are over, so that a run resumed from it skips none.
actor ImportTally {
    private(set) var summary: ReceiptServer.ImportSummary
    private var nextIndex: Int
    /// Ids over beyond `summary.done`, waiting for the ones before them.
    private var overAhead: [Int: StoreImporter.Outcome] = [:]

    init(_ start: ReceiptServer.ImportSummary) {
        summary = start
        nextIndex = start.done
    }

    func next() -> Int? {
        guard nextIndex < summary.total else { return nil }
        defer { nextIndex += 1 }
        return nextIndex
    }

    func finish(_ index: Int, _ outcome: StoreImporter.Outcome) {
        overAhead[index] = outcome
        while let over = overAhead.removeValue(forKey: summary.done) {
            switch over {
            case .imported: summary.imported += 1
            case .alreadyCurrent: summary.alreadyCurrent += 1
            case .unknownToApple: summary.unknownToApple += 1
            case .refused: summary.refused += 1
            }
            summary.done += 1
        }
    }
}

/// Spaces each endpoint's calls evenly at `callsPerSecond`: a call waits for the slot after
/// the last one given out. Apple counts each endpoint's calls apart ("Identifying rate limits").
actor ImportPacer {
    enum Endpoint: Sendable { case history, statuses }

    private let interval: Duration
    private var nextSlot: [Endpoint: ContinuousClock.Instant] = [:]

    init(callsPerSecond: Int) {
        interval = .seconds(1) / max(1, callsPerSecond)
    }

    func wait(_ endpoint: Endpoint) async throws {
        let now = ContinuousClock.now
        let slot = max(now, nextSlot[endpoint] ?? now)
        nextSlot[endpoint] = slot + interval
        if slot > now { try await Task.sleep(until: slot, clock: .continuous) }
    }
}
