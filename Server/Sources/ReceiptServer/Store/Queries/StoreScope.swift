import ReceiptCore

/// Whose rows a statement reads or writes: one app (its bundle id) in one environment
/// (Apple's signed name, as the transactions' `environment` fact holds it). Rows of one scope
/// never answer for another (#59: one server for several apps and both environments).
///
/// A statement names its scope by tokens rather than by numbered placeholders, so that the
/// scope goes into any statement without renumbering its own binds (figures and queues number
/// theirs by hand):
/// - `{scope}`: `bundle_id = $N AND environment = $N+1`;
/// - `{scope:alias}`: the same columns of `alias` (a join, a correlated subquery);
/// - `{scope.values}`: `$N, $N+1`, for an INSERT's values.
/// N is one past the statement's own binds, and the scope's two binds follow them. Each token
/// of a statement names the same two placeholders (both dialects allow a placeholder to repeat);
/// a statement without a token gets no binds (PostgreSQL refuses a placeholder it cannot type).
struct StoreScope: Sendable, Hashable, CustomStringConvertible {
    let bundleID: String
    let environment: ReceiptEnvironment

    var description: String { "\(bundleID) (\(environment.signedName))" }

    /// The tables whose rows belong to a scope: a statement that names one must carry a token.
    static let keyedTables: Set<String> = [
        "transactions", "renewal_infos", "notifications", "consent_rescissions", "consumption_answers",
        "webhook_endpoints", "events", "deliveries", "subscription_summaries", "subscription_flow_days",
        "subscription_expiry_days",
    ]

    /// A statement this scope cannot be written into.
    struct Unscoped: Error, CustomStringConvertible {
        let problem: String
        let sql: String
        var description: String { "\(problem), in: \(sql.prefix(200))" }
    }

    /// `sql` with its tokens written out in `dialect`'s placeholders, and `binds` with the
    /// scope's appended when a token occurs. Throws for a statement that names a keyed table
    /// without a token, and for a malformed token. A statement with a token is not checked
    /// further: that each table of a join is scoped is for the statements' own tests to show.
    func bind(_ sql: String, _ binds: [StoreValue], _ dialect: StoreDialect) throws -> (String, [StoreValue]) {
        let bundle = dialect.placeholder(binds.count + 1)
        let environment = dialect.placeholder(binds.count + 2)
        var written = ""
        var rest = sql[...]
        var found = false
        while let open = rest.firstRange(of: "{scope") {
            written += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].firstIndex(of: "}") else {
                throw Unscoped(problem: "a scope token is not closed", sql: sql)
            }
            let form = rest[open.upperBound..<close]
            written += try Self.expansion(of: form, bundle: bundle, environment: environment, sql: sql)
            rest = rest[rest.index(after: close)...]
            found = true
        }
        written += rest
        guard found else {
            if let table = Self.keyedTable(named: sql) {
                throw Unscoped(problem: "a statement on \(table) carries no scope token", sql: sql)
            }
            return (sql, binds)
        }
        return (written, binds + [.text(bundleID), .text(self.environment.signedName)])
    }

    /// What a token (the text after `{scope`, before `}`) stands for.
    private static func expansion(of form: Substring, bundle: String, environment: String, sql: String) throws -> String {
        if form.isEmpty { return "bundle_id = \(bundle) AND environment = \(environment)" }
        if form == ".values" { return "\(bundle), \(environment)" }
        if form.first == ":", case let alias = form.dropFirst(), isIdentifier(alias) {
            return "\(alias).bundle_id = \(bundle) AND \(alias).environment = \(environment)"
        }
        throw Unscoped(problem: "no scope token is written {scope\(form)}", sql: sql)
    }

    /// The first keyed table `sql` names as a whole word, if any.
    private static func keyedTable(named sql: String) -> String? {
        var word = ""
        for character in sql.lowercased() + " " {
            if isWordCharacter(character) {
                word.append(character)
                continue
            }
            if keyedTables.contains(word) { return word }
            word = ""
        }
        return nil
    }

    private static func isIdentifier(_ text: Substring) -> Bool {
        guard let first = text.first, isWordCharacter(first), !first.isNumber else { return false }
        return text.allSatisfy(isWordCharacter)
    }

    /// A character of an unquoted SQL name: ASCII letters, digits and `_`.
    private static func isWordCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || character == "_")
    }
}

/// Statements of one scope: each has its tokens written out and the scope bound
/// (StoreScope.bind) before the inner statements run it.
struct ScopedStatements: StoreStatements {
    let inner: any StoreStatements
    let scope: StoreScope
    var dialect: StoreDialect { inner.dialect }

    func run(_ sql: String, _ binds: [StoreValue]) async throws -> [[StoreValue]] {
        let (scoped, values) = try scope.bind(sql, binds, dialect)
        return try await inner.run(scoped, values)
    }
}
