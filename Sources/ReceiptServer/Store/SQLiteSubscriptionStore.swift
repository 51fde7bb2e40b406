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
/// at a time (SerialGate); `readerCount` others read, in turn (a connection runs one
/// statement at a time), and see only what was committed. Several
/// `receipt serve` processes on one machine may share the file (SQLite's locks,
/// `busy_timeout`); across machines, use PostgreSQL.
final class SQLiteSubscriptionStore: SubscriptionStore {
    private let writer: SQLiteConnection
    private let readers: [SQLiteConnection]
    private let nextReader = Atomic<Int>(0)
    private let gate = SerialGate()
    static let readerCount = max(2, ServerSettings.coreCount)
    static let placeholders = StoreDialect.sqlite.placeholders(1...6)

    private init(writer: SQLiteConnection, readers: [SQLiteConnection]) {
        self.writer = writer
        self.readers = readers
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
        let writer = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
        do {
            for pragma in ["PRAGMA busy_timeout = 10000", "PRAGMA journal_mode = WAL", "PRAGMA synchronous = FULL"] {
                _ = try await writer.query(pragma, [])
            }
            var readers: [SQLiteConnection] = []
            for _ in 0..<readerCount {
                let reader = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
                readers.append(reader)
                _ = try await reader.query("PRAGMA busy_timeout = 10000", [])
            }
            return SQLiteSubscriptionStore(writer: writer, readers: readers)
        } catch {
            try? await writer.close()
            throw error
        }
    }

    func run() async {}

    func migrate() async throws {
        let connection = writer
        _ = try await connection.query("BEGIN IMMEDIATE", [])
        do {
            try await StoreMigration.migrate(on: SQLiteStatements(connection: connection))
            _ = try await connection.query("COMMIT", [])
        } catch {
            _ = try? await connection.query("ROLLBACK", [])
            throw error
        }
    }

    /// `work` inside BEGIN IMMEDIATE … COMMIT on the write connection, alone.
    private func transaction<T: Sendable>(_ work: @escaping @Sendable (SQLiteConnection) async throws -> T) async throws -> T {
        let writer = self.writer
        return try await gate.run {
            _ = try await writer.query("BEGIN IMMEDIATE", [])
            do {
                let result = try await work(writer)
                _ = try await writer.query("COMMIT", [])
                return result
            } catch {
                _ = try? await writer.query("ROLLBACK", [])
                throw error
            }
        }
    }

    func record(_ notification: ReceivedNotification) async throws -> Bool {
        try await transaction { try await StoreWrites.record(notification, on: SQLiteStatements(connection: $0)) }
    }

    func record(transactions: [StoredTransaction], renewalInfos: [StoredRenewalInfo]) async throws {
        try await transaction { connection in
            try await StoreWrites.record(transactions: transactions, renewalInfos: renewalInfos,
                                         on: SQLiteStatements(connection: connection))
        }
    }

    func withStatements<T: Sendable>(transaction inTransaction: Bool,
                                     _ work: @escaping @Sendable (any StoreStatements) async throws -> T) async throws -> T {
        guard inTransaction else { return try await work(SQLiteStatements(connection: reader)) }
        return try await transaction { try await work(SQLiteStatements(connection: $0)) }
    }

    func subscriptions(_ originalTransactionIDs: [String], transactionsEach: Int) async throws -> StoredSubscriptions {
        var found = StoredSubscriptions()
        guard !originalTransactionIDs.isEmpty else { return found }
        let list = "IN (" + originalTransactionIDs.indices.map { "?\($0 + 1)" }.joined(separator: ", ") + ")"
        for row in try await reader.query(StoreSchema.subscriptionsQuery(list, each: transactionsEach),
                                          originalTransactionIDs.map { .text($0) }) {
            guard let jws = row.column("jws")?.string else { continue }
            if row.column("kind")?.integer == 0 { found.transactions.append(jws) } else { found.renewalInfos.append(jws) }
        }
        return found
    }

    func transactions(appAccountToken: String, after cursor: StoreCursor?, limit: Int) async throws -> StoredPage {
        var binds: [SQLiteData] = [.text(appAccountToken.lowercased())]
        if let cursor { binds += [.integer(Int(cursor.signedDate)), .text(cursor.transactionID)] }
        let rows = try await reader.query(StoreSchema.accountPageQuery(placeholders: Self.placeholders, afterCursor: cursor != nil,
                                                                       limit: limit), binds)
        return StoredPage.of(rows.map { row in
            (Int64(row.column("signed_date")?.integer ?? 0), row.column("transaction_id")?.string ?? "",
             row.column("jws")?.string ?? "")
        }, limit: limit)
    }

    func consentRescission(appTransactionID: String) async throws -> StoredConsentRescission? {
        guard let row = try await reader.query(StoreSchema.consentRescissionQuery + "?1", [.text(appTransactionID)]).first,
              let uuid = row.column("notification_uuid")?.string, let signed = row.column("signed_date")?.integer,
              let jws = row.column("jws")?.string else { return nil }
        return StoredConsentRescission(storedJWS: jws, notificationUUID: uuid, signedDate: Int64(signed))
    }

    func setting(_ key: String) async throws -> String? {
        try await reader.query("SELECT value FROM settings WHERE key = ?1", [.text(key)]).first?.column("value")?.string
    }

    func setSetting(_ key: String, _ value: String) async throws {
        try await transaction { connection in
            _ = try await connection.query("""
                INSERT INTO settings (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value
                """, [.text(key), .text(value)])
        }
    }

    func ping() async throws { _ = try await reader.query("SELECT 1", []) }

    func close() async throws {
        for reader in readers { try await reader.close() }
        try await writer.close()
    }
}
