#if canImport(Glibc)
import Glibc
#endif
import Metrics
import Synchronization
// The SQLite that sqlite-nio compiles in (its C target), so that the server holds one copy of
// it. sqlite-nio runs every statement on its thread pool; these reads need its C API directly.
import VaporCSQLite

/// The store's point reads (one subscription, one page of an account, one consent), made on
/// the caller's thread with statements prepared once, instead of on sqlite-nio's thread pool.
///
/// Why: such a read takes SQLite tens of microseconds, and a trip to the pool and back cost
/// two thread wake-ups and a fresh `sqlite3_prepare` each time; with the server's two event
/// loops and the pool's threads sharing two cores, that (with the deadline's timer,
/// DeadlineStore) was about half the time of a GET /v1/subscriptions/{id} (docs/performance.md).
///
/// Bounds, so that a read never holds an event loop for long:
/// - each handle is read-only and never waits for a lock (`busy_timeout` 0);
/// - a read stops after `maxRows` rows (its statements are index lookups whose rows are
///   bounded by the caller's limits; the largest are read whole by the pool instead);
/// - a read that finds no free handle does not wait for one.
/// In each case `read` answers `false`, and the caller reads through sqlite-nio as before:
/// the same statement, the same answer, off the event loop. Errors other than SQLITE_BUSY
/// and SQLITE_LOCKED are thrown (SQLiteCallError). A read whose pages are not in memory still waits for the disk, as any
/// read does; it is at most `maxRows` rows of the indexes it uses.
final class SQLiteQuickReads: Sendable {
    /// Rows one quick read may step through; the state of a subscription is at most 101.
    static let maxRows = 160
    /// Statements kept prepared per handle; the least recently added is finalized past it.
    static let maxStatements = 16

    /// The handles no read holds; once closed, a handle given back is closed instead.
    private let pool: Mutex<(free: [Handle], closed: Bool)>
    private static let completed = Metrics.Counter(label: ServerMetrics.quickReads, dimensions: [("outcome", "read")])
    private static let handedOn = Metrics.Counter(label: ServerMetrics.quickReads, dimensions: [("outcome", "handed_on")])

    /// Opens `count` read-only handles on the database at `path` (which must exist, in WAL mode).
    init(path: String, count: Int) throws {
        var opened: [Handle] = []
        do {
            for _ in 0..<max(1, count) { opened.append(try Handle(path: path)) }
        } catch {
            for handle in opened { handle.close() }
            throw error
        }
        pool = Mutex((free: opened, closed: false))
    }

    /// Steps `sql` with `binds`, handing each row to `row`. True when every row was read;
    /// false when the read was left to the pool (see the type's comment): the caller then
    /// discards what `row` was given and reads again.
    func read(_ sql: String, _ binds: [StoreValue], row: (any PointReadRow) throws -> Void) throws -> Bool {
        let taken = try pool.withLock { pool -> Handle? in
            if pool.closed { throw SQLiteCallError(status: SQLITE_MISUSE, message: "the store is closed") }
            return pool.free.popLast()
        }
        guard let handle = taken else {
            Self.handedOn.increment()
            return false
        }
        defer {
            let closed = pool.withLock { pool in
                if !pool.closed { pool.free.append(handle) }
                return pool.closed
            }
            if closed { handle.close() }
        }
        let whole = try handle.read(sql, binds, maxRows: Self.maxRows, row: row)
        (whole ? Self.completed : Self.handedOn).increment()
        return whole
    }

    /// Closes every handle: the free ones now, the ones reads hold when they are given back.
    /// Reads after it throw.
    func close() {
        let free = pool.withLock { pool in
            pool.closed = true
            defer { pool.free = [] }
            return pool.free
        }
        for handle in free { handle.close() }
    }

    /// One row of a quick read, valid only inside the `row` closure.
    private struct Row: PointReadRow {
        let statement: OpaquePointer

        func text(_ column: Int32) -> String? { SQLiteCalls.text(statement, column) }
        func integer(_ column: Int32) -> Int64? { SQLiteCalls.integer(statement, column) }
    }

    /// One read-only connection and its prepared statements. Used by one thread at a time
    /// (`SQLiteQuickReads.free` hands it out), so SQLite's own mutex is off.
    private final class Handle: @unchecked Sendable {
        /// The most of the file a handle maps (SQLite lowers it to its own limit).
        static let mappedBytes = 1 << 31
        private var connection: OpaquePointer?
        private var statements = SQLitePreparedStatements(limit: SQLiteQuickReads.maxStatements)

        init(path: String) throws {
            let opened = try SQLiteCalls.open(path, flags: SQLITE_OPEN_READONLY, purpose: "for reading")
            connection = opened
            sqlite_nio_sqlite3_busy_timeout(opened, 0)
            // A stored JWS is longer than a page, so most of it lies in overflow pages, which
            // SQLite reads straight from the file (a pread each, three a subscription's state)
            // rather than through its cache. Mapped, they are memory copies. The map adds no way
            // to fail: in WAL mode SQLite maps the WAL's index (the -shm file) already, and
            // an I/O error under either map ends the process alike. SQLite caps the map at
            // its SQLITE_MAX_MMAP_SIZE (2 GB here); pages past it are read as before, and a
            // handle whose map could not be set still reads correctly, so the status is not checked.
            sqlite_nio_sqlite3_exec(opened, "PRAGMA mmap_size = \(Self.mappedBytes)", nil, nil, nil)
            // Row.text reads a text's bytes as stored, which are UTF-8 only in a UTF-8 database
            // (the server makes its stores so; a file converted to UTF-16 by hand is refused).
            let encoding = Self.encoding(of: opened)
            guard encoding == "UTF-8" else {
                sqlite_nio_sqlite3_close_v2(opened)
                connection = nil
                throw SQLiteCallError(status: SQLITE_MISMATCH, message: "\(path) keeps its text in \(encoding ?? "an unknown encoding"), "
                                      + "not UTF-8 as the stores receipt serve makes")
            }
        }

        /// The database's text encoding (`PRAGMA encoding`): "UTF-8", "UTF-16le" or "UTF-16be".
        private static func encoding(of connection: OpaquePointer) -> String? {
            var statement: OpaquePointer?
            guard sqlite_nio_sqlite3_prepare_v2(connection, "PRAGMA encoding", -1, &statement, nil) == SQLITE_OK, let statement else { return nil }
            defer { sqlite_nio_sqlite3_finalize(statement) }
            guard sqlite_nio_sqlite3_step(statement) == SQLITE_ROW, let text = sqlite_nio_sqlite3_column_text(statement, 0) else { return nil }
            return String(cString: text)
        }

        func read(_ sql: String, _ binds: [StoreValue], maxRows: Int, row: (any PointReadRow) throws -> Void) throws -> Bool {
            guard let connection else { throw SQLiteCallError(status: SQLITE_MISUSE, message: "the store is closed") }
            return try statements.with(sql, binds, on: connection) { statement in
                var rows = 0
                while true {
                    let status = sqlite_nio_sqlite3_step(statement)
                    switch status {
                    case SQLITE_ROW:
                        rows += 1
                        if rows > maxRows { return false }
                        try row(Row(statement: statement))
                    case SQLITE_DONE:
                        return true
                    case SQLITE_BUSY, SQLITE_LOCKED:
                        return false  // a writer's checkpoint or recovery: the pool's reader waits for it
                    default:
                        throw SQLiteCalls.failure(status, connection)
                    }
                }
            }
        }

        func close() {
            statements.finalizeAll()
            sqlite_nio_sqlite3_close_v2(connection)
            connection = nil
        }
    }
}

/// A row of a point read, by column position: a text, or an integer (nil for any other value).
protocol PointReadRow {
    func text(_ column: Int32) -> String?
    func integer(_ column: Int32) -> Int64?
}

