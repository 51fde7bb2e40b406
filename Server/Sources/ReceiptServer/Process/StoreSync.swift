#if canImport(Glibc)
import Glibc
#endif
import Logging
import ReceiptCore
import ReceiptServerAPIClient

/// `receipt sync`: the notification history between two instants (Apple keeps 180
/// days), then the whole transaction history of every subscription it named, into a
/// store. Resumable: the position (the history's pagination token, then the
/// subscriptions still to pull: SyncPendingSubscriptions) is saved in the store after
/// every page, so a second run with the same `since` goes on where the first stopped.
extension ReceiptServer {
    public struct SyncSummary: Sendable {
        public var notificationPages = 0
        public var notifications = 0
        public var subscriptions = 0
        public var transactions = 0
        public var resumed = false
    }

    /// Apple keeps notification history for 180 days.
    public static let notificationHistoryDays: Int64 = 180
    static let cursorKey = "sync.notification_history"

    public static func sync(storeLocation: StoreLocation, api: ServerAPIClient, since: Int64, until: Int64, logger: Logger,
                            progress: @escaping @Sendable (String) -> Void) async throws -> SyncSummary {
        try await withStore(storeLocation, logger: logger) { store in
            let catchUp = StoreCatchUp(client: AppStoreServerAPIClient(api), store: store)
            return try await sync(catchUp, since: since, until: until, progress: progress)
        }
    }

    /// How `withStore` readies a store before the work.
    enum StorePreparation: Sendable {
        /// Brought to this build's schema version (within 15 s, as a server's start).
        case migrate
        /// Left as it is (`receipt audit`, which must not change what it checks): it must exist and
        /// be at this build's schema version already.
        case checkVersion
        /// Brought to `version` in one transaction, with no deadline: the audit's scratch store, made
        /// empty and filled afterwards.
        case migrateThrough(Int)
    }

    /// Opens the store at `location`, readies it (`preparing`), runs `work` with it, and closes
    /// it: the command-line tools' way to a store. StoreOpenError when it cannot be used.
    static func withStore<T: Sendable>(_ location: StoreLocation, preparing preparation: StorePreparation = .migrate,
                                       logger: Logger,
                                       _ work: @escaping @Sendable (any SubscriptionStore) async throws -> T) async throws -> T {
        if case .checkVersion = preparation, (try? location.postgres()) == nil, access(location.text, F_OK) != 0 {
            throw StoreOpenError(location: location, reason: "no such file")
        }
        let store: any SubscriptionStore
        do {
            store = try await makeSubscriptionStore(location: location, logger: logger)
        } catch {
            throw StoreOpenError(location: location, reason: "\(error)")
        }
        return try await withThrowingTaskGroup(of: T?.self) { tasks in
            tasks.addTask { await store.run(); return nil }
            defer { tasks.cancelAll() }
            return try await store.closing {
                do {
                    switch preparation {
                    case .migrate: try await Deadline.within(seconds: 15) { try await store.migrate() }
                    case .checkVersion: try await checkVersion(of: store)
                    case .migrateThrough(let version):
                        try await store.withStatements(transaction: true) { try await StoreMigration.migrate(on: $0, through: version) }
                    }
                } catch {
                    throw StoreOpenError(location: location, reason: "\(error)")
                }
                return try await work(store)
            }
        }
    }

    /// Throws unless the store holds this build's schema version (within 15 s, as a migration's start).
    private static func checkVersion(of store: any SubscriptionStore) async throws {
        let found = try await Deadline.within(seconds: 15) {
            try await store.withStatements(transaction: false) { statements -> Int64? in
                let exists = statements.dialect == .sqlite
                    ? "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
                    : "SELECT count(*) FROM pg_catalog.pg_tables WHERE tablename = 'schema_version' AND schemaname = current_schema()"
                guard try await statements.run(exists, []).first?.first?.integer == 1 else { return nil }
                return try await statements.run("SELECT coalesce(max(version), 0) FROM schema_version", []).first?.first?.integer ?? 0
            }
        }
        guard let found else { throw UnusableStore(description: "it holds no receipt serve store (no schema_version table)") }
        let mine = Int64(StoreSchema.version)
        guard found <= mine else {
            throw UnusableStore(description: "it is at schema version \(found), newer than this receipt's \(mine): audit it with "
                                + "the receipt that upgraded it")
        }
        guard found == mine else {
            throw UnusableStore(description: "it is at schema version \(found), and this receipt's is \(mine): start this "
                                + "receipt serve on it once (it upgrades the store), then audit it")
        }
    }

    private struct UnusableStore: Error, CustomStringConvertible {
        let description: String
    }

    /// The saved position: "SINCE UNTIL TOKEN" while the history is being read ("-": first page), "SINCE UNTIL done" after.
    private static func sync(_ catchUp: StoreCatchUp, since: Int64, until: Int64,
                             progress: @escaping @Sendable (String) -> Void) async throws -> SyncSummary {
        let store = catchUp.store
        var summary = SyncSummary()
        var end = until
        var token: String?
        var historyDone = false
        let saved = (try await store.setting(cursorKey) ?? "").split(separator: " ").map(String.init)
        if saved.count == 3, saved[0] == String(since), let savedEnd = Int64(saved[1]) {
            end = savedEnd
            historyDone = saved[2] == "done"
            token = saved[2] == "-" || historyDone ? nil : saved[2]
            summary.resumed = true
            progress("resuming the sync since \(since) (until \(end))" + (historyDone ? ": notification history already read" : ""))
        } else {
            try await SyncPendingSubscriptions.clear(in: store)
        }
        var pending = try await SyncPendingSubscriptions.load(from: store)
        if !historyDone {
            var arguments: [String: JSONValue] = ["startDate": .number(String(since)), "endDate": .number(String(end))]
            if let token { arguments["paginationToken"] = .string(token) }
            try await store.setSetting(cursorKey, "\(since) \(end) \(token ?? "-")")
            for try await page in catchUp.client.pages("get_notification_history", arguments) {
                let rows = try await catchUp.keep(page)
                try await pending.add(rows.originalTransactionIDs, in: store)
                try await store.setSetting(cursorKey, "\(since) \(end) \(page.nextPage?.value.stringValue ?? "done")")
                summary.notificationPages += 1
                summary.notifications += rows.notifications.count
                progress("notification history: \(summary.notificationPages) pages, \(summary.notifications) notifications, "
                         + "\(pending.named.count) subscriptions")
            }
            try await store.setSetting(cursorKey, "\(since) \(end) done")
        }
        let toPull = pending.toPull
        for (index, id) in toPull.enumerated() {
            do {
                summary.transactions += try await catchUp.pull("get_transaction_history", ["transactionId": .string(id)],
                                                              maxPages: StoreCatchUp.maxHistoryPages)
            } catch let refused as StoreRowRefused {
                // No store can hold a row of it: pulling it again cannot help, so the sync goes on without it.
                progress("subscription \(id) not kept: the store refused a row of it (\(refused))")
            }
            summary.subscriptions += 1
            try await pending.markPulled(id, in: store)
            progress("transaction histories: \(summary.subscriptions) done, \(toPull.count - index - 1) to go")
        }
        try await SyncPendingSubscriptions.clear(in: store)
        try await store.setSetting(cursorKey, "")
        return summary
    }
}
