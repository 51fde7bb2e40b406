import ReceiptCore

/// Brings a store's schema to StoreSchema.version, once for both databases, inside the
/// caller's transaction (so that a failed or cancelled migration leaves the store as it was:
/// a server stopped while it migrates stops at the next check, before each statement of a
/// version or page of a fill), applying the
/// statements of each version after the one applied; for a version of
/// StoreSchema.factVersions, the fact columns a table lacks, then every row's facts
/// derived from its JWS.
enum StoreMigration {
    /// Whether a store that held rows was upgraded: the rows its statements rewrote want
    /// the database's statistics and (PostgreSQL) visibility made again. `target`: the version
    /// to stop at (`receipt audit`'s scratch store stops before the derived tables, then adds
    /// its rows, then migrates the rest); `derivingFacts` false: the rows' fact columns were
    /// written from their verified JWS already (that scratch store's), so none is derived again.
    @discardableResult
    static func migrate(on statements: some StoreStatements, through target: Int = StoreSchema.version,
                        derivingFacts: Bool = true) async throws -> Bool {
        _ = try await statements.run("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)", [])
        let found = try await statements.run("SELECT coalesce(max(version), 0) FROM schema_version", []).first?.first?.integer ?? 0
        guard found <= Int64(StoreSchema.version) else { throw StoreSchema.TooNew(found: Int(found)) }
        guard found < Int64(target) else { return false }
        for version in Int(found + 1)...target {
            for statement in StoreSchema.statements(of: version, statements.dialect) {
                try Task.checkCancellation()
                _ = try await statements.run(statement, [])
            }
            if StoreSchema.factVersions.contains(version) {
                try await addMissingFactColumns(on: statements)
                if derivingFacts { try await deriveFacts(on: statements) }
            }
            if version == StoreSchema.activeDaysVersion { try await ActiveDays.fill(on: statements) }
            _ = try await statements.run("INSERT INTO schema_version (version) VALUES (\(version))", [])
        }
        return found > 0
    }

    /// Adds each fact column (StoredFacts) its table lacks.
    static func addMissingFactColumns(on statements: some StoreStatements) async throws {
        for table in FactTable.all {
            let present = Set(try await statements.run(statements.dialect.columnsQuery(of: table.name), []).compactMap { $0.first?.text })
            for column in table.columns where !present.contains(column.name) {
                _ = try await statements.run("ALTER TABLE \(table.name) ADD COLUMN \(column.name) \(column.sqlType)", [])
            }
        }
    }

    /// Rows read at once while deriving facts, so that memory stays bounded whatever the store holds.
    static let page = 500

    /// Writes the fact columns of every stored transaction and renewal info from its JWS
    /// (StoredFacts, the one derivation), a page at a time (StoreDialect.page). A row whose JWS no
    /// longer decodes (a store edited by hand) keeps NULLs; their number is returned.
    @discardableResult
    static func deriveFacts(on statements: some StoreStatements) async throws -> Int {
        let d = statements.dialect
        var unreadable = 0
        for table in FactTable.all {
            let assignments = table.columns.enumerated().map { "\($1.name) = \(d.placeholder($0 + 2))" }.joined(separator: ", ")
            let position = d.pagePosition(key: table.key)
            var after: StoreValue?
            while true {
                try Task.checkCancellation()
                let query = d.page(of: table.name, key: table.key, columns: ["jws"], after: after, limit: page)
                let rows = try await statements.run(query.sql, query.binds)
                for row in rows {
                    after = row[0]
                    guard let jws = row[1].text, let facts = table.facts(jws) else { unreadable += 1; continue }
                    _ = try await statements.run("UPDATE \(table.name) SET \(assignments) WHERE \(position) = \(d.placeholder(1))",
                                                 [row[0]] + facts.map(StoreValue.init))
                }
                if rows.count < page { break }
            }
        }
        return unreadable
    }
}

/// A table whose rows carry facts: its key, its fact columns, and how a row's JWS gives them.
struct FactTable: Sendable {
    let name: String
    let key: String
    let columns: [FactColumn]
    let facts: @Sendable (String) -> [StoredFact]?

    static let all = [
        FactTable(name: "transactions", key: "transaction_id", columns: StoredFacts.transactionColumns,
                  facts: { StoredTransaction(storedJWS: $0)?.facts }),
        FactTable(name: "renewal_infos", key: "original_transaction_id", columns: StoredFacts.renewalInfoColumns,
                  facts: { StoredRenewalInfo(storedJWS: $0)?.facts }),
    ]
}
