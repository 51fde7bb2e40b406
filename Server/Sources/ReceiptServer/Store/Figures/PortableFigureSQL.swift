/// The figures' SQL as text another engine can run on a copy of the store's tables (Spark
/// over JDBC, a notebook, psql): the very statement StoreFigures runs, its arguments written
/// in as literals, so that no second definition of a figure exists. It is ANSI SQL that
/// PostgreSQL, SQLite and Spark SQL all accept (CTEs, ROW_NUMBER, CASE, GROUP BY position).
public enum PortableFigureSQL {
    /// The figures that are one statement: by product and status, and MRR's price groups
    /// (currency, standing period length in milliseconds, subscriptions, price sum).
    public static let figures = ["subscriptions", "mrr"]

    /// The statement of `figure` at `instant`, limited to `product` when given; nil for
    /// another figure.
    public static func statement(_ figure: String, at instant: Int64, product: String?) async throws -> String? {
        let capture = Capture()
        switch figure {
        case "subscriptions": _ = try await StoreFigures.activeSubscriptions(at: instant, product: product, from: .rows, on: capture)
        case "mrr": _ = try await StoreFigures.activePrices(at: instant, product: product, from: .rows, on: capture)
        default: return nil
        }
        guard let (sql, values) = capture.statements.last else { return nil }
        return inlined(sql, values)
    }

    /// `sql` with each `$n` replaced by the n-th value as a literal, in one pass (so that a
    /// text value holding `$1` is left as it is).
    static func inlined(_ sql: String, _ values: [StoreValue]) -> String {
        var text = ""
        var characters = sql[...]
        while let dollar = characters.firstIndex(of: "$") {
            text += characters[..<dollar]
            let digits = characters[characters.index(after: dollar)...].prefix { $0.isASCII && $0.isNumber }
            characters = characters[digits.endIndex...]
            guard let number = Int(digits), values.indices.contains(number - 1) else {
                text += "$" + digits
                continue
            }
            let literal = switch values[number - 1] {
            case .integer(let integer): String(integer)
            case .text(let string): "'" + string.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "''") + "'"
            case .null: "NULL"
            }
            text += literal
        }
        return text + characters
    }

    /// Statements that record what they are asked and return no rows.
    private final class Capture: StoreStatements, @unchecked Sendable {
        var statements: [(String, [StoreValue])] = []
        var dialect: StoreDialect { .postgres }

        func run(_ sql: String, _ binds: [StoreValue]) async throws -> [[StoreValue]] {
            statements.append((sql, binds))
            return []
        }
    }
}
