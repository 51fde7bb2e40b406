import PostgresNIO
import ReceiptCore
import SQLiteNIO

/// The two databases' words where they differ, so that a statement is written once.
enum StoreDialect: Sendable {
    case sqlite, postgres

    /// The n-th (from 1) bound parameter.
    func placeholder(_ n: Int) -> String { self == .sqlite ? "?\(n)" : "$\(n)" }
    func placeholders(_ range: ClosedRange<Int>) -> [String] { range.map(placeholder) }

    /// The statement that adds differences to `rows` rows of counts kept by every write
    /// (FlowDays, ExpiryDays, ActiveDays, MRRMoveDays), making each row when it is absent: per row,
    /// the key's values, then each count's.
    func addingUpsert(into table: String, key: [String], counts: [String], rows: Int) -> String {
        let columns = key + counts
        let values = (0..<rows).map { row in
            "(" + placeholders(row * columns.count + 1...(row + 1) * columns.count).joined(separator: ", ") + ")"
        }
        return "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES \(values.joined(separator: ", ")) "
            + "ON CONFLICT (\(key.joined(separator: ", "))) "
            + "DO UPDATE SET " + counts.map { "\($0) = \(table).\($0) + excluded.\($0)" }.joined(separator: ", ")
    }
    /// The column a table is paged in (`page`): SQLite's rowid, on which a key's value has no bearing
    /// (SQLite lets a text key be NULL, empty or not UTF-8, and sqlite-nio reads text back only up to a
    /// NUL, so a page that went on from a key read back could skip rows or never end); PostgreSQL's key,
    /// in its own collation so that its primary key's index gives the order (its keys are never NULL and
    /// always valid text).
    func pagePosition(key: String) -> String { self == .sqlite ? "rowid" : key }

    /// One page of `table`'s rows: the position to give as `after` for the next page (nil: the first
    /// page), then `columns`; each row once, in one order, however many pages.
    func page(of table: String, key: String, columns: [String], after: StoreValue?, limit: Int) -> (sql: String, binds: [StoreValue]) {
        // Qualified: an output column may bear the key's name too (PostgreSQL names `CASE … ELSE key END` so).
        let position = "\(table).\(pagePosition(key: key))"
        let from = after == nil ? "" : " WHERE \(position) > \(placeholder(1))"
        return ("SELECT \(position), \(columns.joined(separator: ", ")) FROM \(table)\(from) ORDER BY \(position) LIMIT \(limit)",
                after.map { [$0] } ?? [])
    }

    /// An auto-numbered key column.
    var sequenceColumn: String {
        self == .sqlite ? "INTEGER PRIMARY KEY AUTOINCREMENT" : "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"
    }
    /// The names of a table's columns, one per row.
    func columnsQuery(of table: String) -> String {
        self == .sqlite ? "SELECT name FROM pragma_table_info('\(table)')"
            : "SELECT column_name::text FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = '\(table)'"
    }
    /// Makes text compare bytewise (SQLite's default).
    var collate: String { self == .sqlite ? "" : " COLLATE \"C\"" }
    /// Locks the rows a claim picks, skipping those another server holds (PostgreSQL);
    /// SQLite has one writer at a time and needs none.
    var skipLocked: String { self == .sqlite ? "" : " FOR UPDATE OF candidate SKIP LOCKED" }
}

/// A value bound to, or read from, a statement.
enum StoreValue: Sendable, Hashable {
    case text(String)
    case integer(Int64)
    case null

    init(_ text: String?) { self = text.map { .text($0) } ?? .null }

    /// A fact column's value (ReceiptCore's StoredFacts).
    init(_ fact: StoredFact) {
        switch fact {
        case .text(let value): self = .text(value)
        case .integer(let value): self = .integer(value)
        case .null: self = .null
        }
    }

    var text: String? { if case .text(let value) = self { value } else { nil } }
    var integer: Int64? { if case .integer(let value) = self { value } else { nil } }

    /// As sqlite-nio binds it.
    var sqliteData: SQLiteData {
        switch self {
        case .text(let value): .text(value)
        case .integer(let value): .integer(Int(value))
        case .null: .null
        }
    }
}

extension StoredFact {
    /// A value read from a store, as the core compares it (`receipt audit`).
    init(_ value: StoreValue) {
        switch value {
        case .text(let text): self = .text(text)
        case .integer(let integer): self = .integer(integer)
        case .null: self = .null
        }
    }
}

/// Runs statements on one connection, inside the caller's transaction: what the
/// outbox (EventOutbox) needs of either database.
protocol StoreStatements: Sendable {
    var dialect: StoreDialect { get }
    /// The rows `sql` returns, each as its columns in order (text, integers or null).
    func run(_ sql: String, _ binds: [StoreValue]) async throws -> [[StoreValue]]
}

extension StoreStatements {
    /// Adds differences to rows of counts kept by every write, making each row when it is absent:
    /// each of `rows` is the key's values, then each count's. Given in key order, as PostgreSQL
    /// locks them in the order given, so that two writers never wait for each other in a circle.
    /// Many rows to a statement (a write makes a few, a migration's fill thousands): each
    /// statement costs a write a trip to the database's thread and back (docs/performance.md).
    func addRows(_ rows: [[StoreValue]], into table: String, key: [String], counts: [String]) async throws {
        let perStatement = 500  // Within both databases' limits on bound values (SQLite 32,766, PostgreSQL 65,535).
        for start in stride(from: 0, to: rows.count, by: perStatement) {
            let chunk = rows[start..<min(start + perStatement, rows.count)]
            _ = try await run(dialect.addingUpsert(into: table, key: key, counts: counts, rows: chunk.count), Array(chunk.joined()))
        }
    }
}

struct SQLiteStatements: StoreStatements {
    let connection: SQLiteConnection
    var dialect: StoreDialect { .sqlite }

    func run(_ sql: String, _ binds: [StoreValue]) async throws -> [[StoreValue]] {
        try await connection.query(sql, binds.map(\.sqliteData)).map { row in
            row.columns.map { column in
                switch column.data {
                case .text(let value): .text(value)
                case .integer(let value): .integer(Int64(value))
                default: .null
                }
            }
        }
    }
}

struct PostgresStatements: StoreStatements {
    let connection: PostgresConnection
    let logger: Logger
    var dialect: StoreDialect { .postgres }

    func run(_ sql: String, _ binds: [StoreValue]) async throws -> [[StoreValue]] {
        var bindings = PostgresBindings()
        for bind in binds {
            switch bind {
            case .text(let value): bindings.append(value)
            case .integer(let value): bindings.append(value)
            case .null: bindings.append(Optional<String>.none)
            }
        }
        var rows: [[StoreValue]] = []
        for try await row in try await connection.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger) {
            rows.append(try row.map { cell in
                guard cell.bytes != nil else { return .null }
                switch cell.dataType {
                case .int2, .int4, .int8: return .integer(try cell.decode(Int64.self))
                default: return .text(try cell.decode(String.self))
                }
            })
        }
        return rows
    }
}
