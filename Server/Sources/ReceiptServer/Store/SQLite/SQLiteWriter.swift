import NIOCore
import NIOPosix
import Synchronization
// The SQLite that sqlite-nio compiles in (as SQLiteQuickReads uses it): the writer needs its C API.
import VaporCSQLite

/// The SQLite store's one write connection: SQLite's C API, its statements kept prepared, run on
/// a thread of its own. It is a TaskExecutor: SQLiteSubscriptionStore runs each transaction's
/// task on it, so that a write runs from BEGIN to COMMIT on that thread, statement after
/// statement, with no other thread woken between two of them.
///
/// Why: sqlite-nio runs each statement on its thread pool, hands each row back to an event loop
/// and prepares each statement anew. A notification's write is some 30 statements, and those
/// thread switches were about half the server's CPU under ingest (docs/performance.md). COMMIT's
/// flush to the disk waits on this thread alone, never on an event loop or Swift's pool.
///
/// Used by one transaction at a time (the store's SerialGate), so SQLite's own mutex is off; it
/// is the StoreStatements that transaction's work is given.
final class SQLiteWriter: TaskExecutor, StoreStatements, @unchecked Sendable {
    /// Statements kept prepared; the least recently added is finalized past it (a write uses
    /// about 30 texts, and an upsert of n rows one per n).
    static let maxStatements = 96

    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let loop: any EventLoop
    /// Set by `close`: the thread is stopped, and what is sent to it would never run.
    private let closed = Atomic<Bool>(false)
    var dialect: StoreDialect { .sqlite }
    // Touched on `loop` only (`run` hops there when called elsewhere).
    private var connection: OpaquePointer?
    private var statements = SQLitePreparedStatements(limit: maxStatements)

    /// Opens (creating it if needed) the database at `path` for writing, in WAL mode with
    /// `synchronous = FULL`, waiting up to 10 s for another process's lock.
    init(path: String) async throws {
        loop = group.next()
        do {
            try await loop.submit { [self] in try open(path) }.get()
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    private func open(_ path: String) throws {
        let opened = try SQLiteCalls.open(path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, purpose: "for writing")
        connection = opened
        sqlite_nio_sqlite3_busy_timeout(opened, 10_000)
        do {
            for pragma in ["PRAGMA journal_mode = WAL", "PRAGMA synchronous = FULL"] { _ = try runHere(pragma, []) }
        } catch {
            closeHere()
            throw error
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
    }

    /// The rows `sql` returns with `binds` (text, integers, or null for any other value), run on
    /// the writer's thread: at once when called there (a transaction's task), else by a hop.
    func run(_ sql: String, _ binds: [StoreValue]) async throws -> [[StoreValue]] {
        if loop.inEventLoop { return try runHere(sql, binds) }
        try checkOpen()
        return try await loop.submit { [self] in try runHere(sql, binds) }.get()
    }

    /// Throws once the writer is closed: a task sent to its thread then would wait forever.
    func checkOpen() throws {
        if closed.load(ordering: .acquiring) { throw SQLiteCallError(status: SQLITE_MISUSE, message: "the store is closed") }
    }

    private func runHere(_ sql: String, _ binds: [StoreValue]) throws -> [[StoreValue]] {
        guard let connection else { throw SQLiteCallError(status: SQLITE_MISUSE, message: "the store is closed") }
        return try statements.with(sql, binds, on: connection) { statement in
            var rows: [[StoreValue]] = []
            while true {
                let status = sqlite_nio_sqlite3_step(statement)
                switch status {
                // Counted at each row: a step may prepare the statement again after the schema changed.
                case SQLITE_ROW: rows.append((0..<sqlite_nio_sqlite3_column_count(statement)).map { Self.value(statement, $0) })
                case SQLITE_DONE: return rows
                default: throw SQLiteCalls.failure(status, connection)
                }
            }
        }
    }

    /// A column as the store reads it: text, an integer, or null for any other value (as sqlite-nio's
    /// readers give it). Text is read as UTF-8 bytes: a store in another encoding is refused when
    /// it opens (SQLiteQuickReads).
    private static func value(_ statement: OpaquePointer, _ column: Int32) -> StoreValue {
        if let integer = SQLiteCalls.integer(statement, column) { return .integer(integer) }
        return SQLiteCalls.text(statement, column).map { .text($0) } ?? .null
    }

    /// Finalizes the statements, closes the connection and stops the thread. Calls after it throw.
    func close() async throws {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        try await loop.submit { [self] in closeHere() }.get()
        try await group.shutdownGracefully()
    }

    private func closeHere() {
        statements.finalizeAll()
        sqlite_nio_sqlite3_close_v2(connection)
        connection = nil
    }
}
