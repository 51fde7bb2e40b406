#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOCore
import NIOPosix
import ReceiptCore
import SQLiteNIO
import Synchronization

/// The default store: one SQLite file (sqlite-nio, which compiles SQLite in), in WAL
/// mode with `synchronous = FULL`, so that a write that returned survives the process
/// being killed and the machine losing power. One connection writes, one transaction
/// at a time (SerialGate), each on the writer's own thread (SQLiteWriter); `readerCount` others read, in turn (a connection runs one
/// statement at a time), and see only what was committed. Point reads (one
/// subscription, an account's page, a consent) can also be made at once
/// (SQLiteQuickReads: on the caller's thread, statements kept prepared); the server's
/// StorePointReads tries those first. Several
/// `receipt serve` processes on one machine may share the file (SQLite's locks,
/// `busy_timeout`); across machines, use PostgreSQL.
final class SQLiteSubscriptionStore: SubscriptionStore {
    private let writer: SQLiteWriter
    private let readers: [SQLiteConnection]
    /// The point reads made at once (StorePointReads).
    let quickReads: SQLiteQuickReads
    private let nextReader = Atomic<Int>(0)
    private let gate = SerialGate()
    /// Notifications arriving together share a transaction and its flush to the disk.
    private let commits = GroupCommit<ReceivedNotification>()
    static let readerCount = max(2, Processors.online)
    /// Handles of the quick reads: one for each thread that may read at once (the event
    /// loops and Swift's cooperative pool, a thread a core each), so that none goes without.
    static let quickHandleCount = 2 * max(2, Processors.online)
    static let placeholders = StoreDialect.sqlite.placeholders(1...6)

    private init(writer: SQLiteWriter, readers: [SQLiteConnection], quick: SQLiteQuickReads) {
        self.writer = writer
        self.readers = readers
        self.quickReads = quick
    }

    /// Creates an empty file at `path` with mode 0600 unless one is there (whose mode is the operator's).
    private static func createPrivately(_ path: String) throws {
        let descriptor = Glibc.open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            Glibc.close(descriptor)
        } else if errno != EEXIST {
            throw ReceiptError(.invalidArgument, "cannot create \(path): \(String(cString: strerror(errno)))")
        }
    }

    private var reader: SQLiteConnection {
        readers[nextReader.wrappingAdd(1, ordering: .relaxed).oldValue % readers.count]
    }

    /// Opens the database at `path`, creating the file if needed: readable and
    /// writable by its owner only (0600; SQLite gives its -wal and -shm files the
    /// database's mode), since it holds customers' purchases.
    static func open(path: String, logger: Logger) async throws -> SQLiteSubscriptionStore {
        try createPrivately(path)
        let writer = try await SQLiteWriter(path: path)
        do {
            var readers: [SQLiteConnection] = []
            do {
                for _ in 0..<readerCount {
                    let reader = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
                    readers.append(reader)
                    _ = try await reader.query("PRAGMA busy_timeout = 10000", [])
                }
                // After the writer made the file WAL: a read-only handle cannot.
                let quick = try SQLiteQuickReads(path: path, count: quickHandleCount)
                return SQLiteSubscriptionStore(writer: writer, readers: readers, quick: quick)
            } catch {
                for reader in readers { try? await reader.close() }
                throw error
            }
        } catch {
            try? await writer.close()
            throw error
        }
    }

    func run() async {}

    /// Cancellable where StoreMigration checks (before each statement of a version, and each page
    /// a fill reads): SIGTERM stops a long migration, which the ROLLBACK undoes.
    func migrate() async throws {
        let writer = self.writer
        try await gate.run {
            try writer.checkOpen()
            return try await withTaskExecutorPreference(writer) { try await Self.bracket(writer) { try await StoreMigration.migrate(on: $0) } }
        }
    }

    /// `work` inside BEGIN IMMEDIATE … COMMIT on the write connection, alone. It runs in a task of
    /// its own, which the caller's cancellation does not reach (a request past its deadline, an
    /// import that stops its saver, the leader of a group commit): started, a write finishes.
    private func transaction<T: Sendable>(_ work: @escaping @Sendable (SQLiteWriter) async throws -> T) async throws -> T {
        let writer = self.writer
        return try await gate.run {
            try writer.checkOpen()
            return try await Task(executorPreference: writer) { try await Self.bracket(writer, work) }.value
        }
    }

    /// BEGIN IMMEDIATE, `work`, COMMIT; on any failure, ROLLBACK. A failed COMMIT may leave the
    /// transaction open (SQLITE_BUSY), so the ROLLBACK ends whatever is open (and fails
    /// harmlessly when nothing is): the next writer's BEGIN never meets "cannot start a
    /// transaction within a transaction".
    private static func bracket<T: Sendable>(_ writer: SQLiteWriter,
                                             _ work: @escaping @Sendable (SQLiteWriter) async throws -> T) async throws -> T {
        do {
            _ = try await writer.run("BEGIN IMMEDIATE", [])
            let result = try await work(writer)
            _ = try await writer.run("COMMIT", [])
            return result
        } catch {
            _ = try? await writer.run("ROLLBACK", [])
            throw error
        }
    }

    func record(_ notification: ReceivedNotification) async throws -> Bool {
        try await commits.record(notification) { [self] batch in
            try await transaction { try await StoreWrites.record(batch: batch, on: $0) }
        }
    }

    func record(transactions: [StoredTransaction], renewalInfos: [StoredRenewalInfo]) async throws {
        try await transaction { try await StoreWrites.record(transactions: transactions, renewalInfos: renewalInfos, on: $0) }
    }

    func withStatements<T: Sendable>(transaction inTransaction: Bool,
                                     _ work: @escaping @Sendable (any StoreStatements) async throws -> T) async throws -> T {
        guard inTransaction else { return try await work(SQLiteStatements(connection: reader)) }
        return try await transaction { try await work($0) }
    }

    func subscriptions(_ originalTransactionIDs: [String], transactionsEach: Int) async throws -> StoredSubscriptions {
        guard !originalTransactionIDs.isEmpty else { return StoredSubscriptions() }  // no statement for no ids
        return try await read(SQLitePointRead.subscriptions(originalTransactionIDs, transactionsEach: transactionsEach))
    }

    func transactions(appAccountToken: String, after cursor: StoreCursor?, limit: Int) async throws -> StoredPage {
        try await read(SQLitePointRead.accountPage(appAccountToken, after: cursor, limit: limit))
    }

    func consentRescission(appTransactionID: String) async throws -> StoredConsentRescission? {
        try await read(SQLitePointRead.consentRescission(appTransactionID))
    }

    /// A point read's answer from one of the readers. (The same read at once, when the quick
    /// reads can make it, is StorePointReads', which the server tries first.)
    private func read<Row, Answer: Sendable>(_ point: SQLitePointRead<Row, Answer>) async throws -> Answer {
        point.answer(try await reader.query(point.sql, point.pooledBinds).compactMap(point.row))
    }

    func setting(_ key: String) async throws -> String? {
        try await reader.query("SELECT value FROM settings WHERE key = ?1", [.text(key)]).first?.column("value")?.string
    }

    func setSetting(_ key: String, _ value: String) async throws {
        try await transaction { statements in
            _ = try await statements.run("""
                INSERT INTO settings (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value
                """, [.text(key), .text(value)])
        }
    }

    func ping() async throws { _ = try await reader.query("SELECT 1", []) }

    func close() async throws {
        quickReads.close()
        for reader in readers { try await reader.close() }
        // Through the gate: a transaction that began finishes first, and none starts on a closed writer.
        let writer = self.writer
        try await gate.run { try await writer.close() }
    }
}

