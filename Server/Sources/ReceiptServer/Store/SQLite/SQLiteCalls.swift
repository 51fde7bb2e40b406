// The SQLite that sqlite-nio compiles in (its C target), so that the server holds one copy of it.
import VaporCSQLite

/// What the store's own calls into SQLite's C API share (SQLiteQuickReads, SQLiteWriter): opening
/// a handle, statements kept prepared, a text column read, and the error SQLite gave.
enum SQLiteCalls {
    /// A handle on the database at `path` opened with `flags` (SQLITE_OPEN_NOMUTEX added: each
    /// handle is used by one thread at a time), or why it could not be (`purpose` says for what).
    static func open(_ path: String, flags: Int32, purpose: String) throws -> OpaquePointer {
        var opened: OpaquePointer?
        let status = sqlite_nio_sqlite3_open_v2(path, &opened, flags | SQLITE_OPEN_NOMUTEX, nil)
        guard status == SQLITE_OK, let opened else {
            let message = opened.map { String(cString: sqlite_nio_sqlite3_errmsg($0)) } ?? "status \(status)"
            sqlite_nio_sqlite3_close_v2(opened)
            throw SQLiteCallError(status: status, message: "cannot open \(path) \(purpose): \(message)")
        }
        return opened
    }

    /// The error of the last call on `connection` that answered `status`.
    static func failure(_ status: Int32, _ connection: OpaquePointer) -> SQLiteCallError {
        SQLiteCallError(status: status, message: String(cString: sqlite_nio_sqlite3_errmsg(connection)))
    }

    /// A text column's bytes as SQLite holds them (`column_blob`: the store is UTF-8, so no
    /// conversion): `column_text` would first copy a value that lies in mapped pages or overflow
    /// to end it with a NUL, a second copy of every JWS read. Nil for a value that is not text.
    static func text(_ statement: OpaquePointer, _ column: Int32) -> String? {
        guard sqlite_nio_sqlite3_column_type(statement, column) == SQLITE_TEXT else { return nil }
        let bytes = sqlite_nio_sqlite3_column_blob(statement, column)  // nil for the empty text
        let count = Int(sqlite_nio_sqlite3_column_bytes(statement, column))
        guard let bytes, count > 0 else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    static func integer(_ statement: OpaquePointer, _ column: Int32) -> Int64? {
        sqlite_nio_sqlite3_column_type(statement, column) == SQLITE_INTEGER ? sqlite_nio_sqlite3_column_int64(statement, column) : nil
    }
}

/// A handle's statements kept prepared: at most `limit`, the least recently used finalized past
/// it (a write's upserts of n rows are a text for each n, and must not push out the statements
/// every write runs).
struct SQLitePreparedStatements {
    let limit: Int
    private var statements: [String: (statement: OpaquePointer, lastUse: Int)] = [:]
    private var uses = 0

    init(limit: Int) { self.limit = limit }

    /// `body` given `sql`'s statement with `binds` bound (from ?1), which is reset for its next use after.
    mutating func with<T>(_ sql: String, _ binds: [StoreValue], on connection: OpaquePointer,
                          _ body: (OpaquePointer) throws -> T) throws -> T {
        let statement = try prepared(sql, on: connection)
        defer {
            sqlite_nio_sqlite3_reset(statement)
            sqlite_nio_sqlite3_clear_bindings(statement)
        }
        for (index, bind) in binds.enumerated() {
            let position = Int32(index + 1)
            let status = switch bind {
            // Its UTF-8 length given: a text holding a NUL is bound whole, as sqlite-nio binds it.
            case .text(let text): sqlite_nio_sqlite3_bind_text64(statement, position, text, UInt64(text.utf8.count), Self.transient,
                                                                UInt8(SQLITE_UTF8))
            case .integer(let value): sqlite_nio_sqlite3_bind_int64(statement, position, value)
            case .null: sqlite_nio_sqlite3_bind_null(statement, position)
            }
            guard status == SQLITE_OK else { throw SQLiteCalls.failure(status, connection) }
        }
        return try body(statement)
    }

    /// Tells SQLite to copy a bound text before the bind returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private mutating func prepared(_ sql: String, on connection: OpaquePointer) throws -> OpaquePointer {
        uses += 1
        if let kept = statements[sql] {
            statements[sql] = (kept.statement, uses)
            return kept.statement
        }
        var made: OpaquePointer?
        let status = sqlite_nio_sqlite3_prepare_v3(connection, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &made, nil)
        guard status == SQLITE_OK, let made else { throw SQLiteCalls.failure(status, connection) }
        if statements.count >= limit, let oldest = statements.min(by: { $0.value.lastUse < $1.value.lastUse }) {
            sqlite_nio_sqlite3_finalize(oldest.value.statement)
            statements[oldest.key] = nil
        }
        statements[sql] = (made, uses)
        return made
    }

    /// Finalizes every statement (before its handle is closed).
    mutating func finalizeAll() {
        for kept in statements.values { sqlite_nio_sqlite3_finalize(kept.statement) }
        statements = [:]
    }
}

/// A call SQLite refused: a quick read's (the store then answers 503, as for any failed read) or
/// the writer's (as for any failed write).
struct SQLiteCallError: Error, CustomStringConvertible {
    let status: Int32
    let message: String
    var description: String { "SQLite failed (status \(status)): \(message)" }
}
