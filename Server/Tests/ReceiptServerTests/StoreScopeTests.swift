#if canImport(Glibc)
import Glibc
#endif
import Logging
import ReceiptCore
import Testing
@testable import ReceiptServer

/// StoreScope's tokens: written out after the statement's own binds, in either dialect, every
/// token of a statement naming the same two placeholders; a statement on a keyed table without
/// a token, and a malformed token, refused; and on SQLite, two scopes' rows kept apart.
@Suite struct StoreScopeTests {
    static let app = StoreScope(bundleID: "com.example.app", environment: .sandbox)

    @Test func tokensBecomeThePlaceholdersAfterTheStatementsOwn() throws {
        let sql = "SELECT jws FROM transactions AS kept WHERE original_transaction_id = $1 AND {scope} "
            + "AND EXISTS (SELECT 1 FROM renewal_infos AS r WHERE {scope:r} AND r.signed_date > $2)"
        let (postgres, binds) = try Self.app.bind(sql, [.text("2000"), .integer(7)], .postgres)
        #expect(postgres == "SELECT jws FROM transactions AS kept WHERE original_transaction_id = $1 AND "
            + "bundle_id = $3 AND environment = $4 AND EXISTS (SELECT 1 FROM renewal_infos AS r WHERE "
            + "r.bundle_id = $3 AND r.environment = $4 AND r.signed_date > $2)")
        #expect(binds == [.text("2000"), .integer(7), .text("com.example.app"), .text("Sandbox")])
        let (sqlite, _) = try Self.app.bind("INSERT INTO notifications (bundle_id, environment, notification_uuid) "
                                            + "VALUES ({scope.values}, ?1)", [.text("uuid")], .sqlite)
        #expect(sqlite == "INSERT INTO notifications (bundle_id, environment, notification_uuid) VALUES (?2, ?3, ?1)")
    }

    @Test func aStatementWithoutTokensKeepsItsBindsUnlessItNamesAKeyedTable() throws {
        let settings = "SELECT value FROM settings WHERE key = $1"
        let (same, binds) = try Self.app.bind(settings, [.text("sync.cursor")], .postgres)
        #expect(same == settings && binds == [.text("sync.cursor")])
        // A word that only contains a table's name is not the table.
        #expect(throws: Never.self) { try Self.app.bind("SELECT my_transactions, events_seen FROM settings", [], .sqlite) }
        for unscoped in ["SELECT jws FROM transactions WHERE transaction_id = ?1", "DELETE FROM Deliveries",
                         "UPDATE subscription_summaries SET x = 1", "SELECT 1 FROM\nevents"] {
            #expect(throws: StoreScope.Unscoped.self, "\(unscoped)") { try Self.app.bind(unscoped, [], .sqlite) }
        }
    }

    @Test func aMalformedTokenIsRefused() {
        for malformed in ["WHERE {scope", "WHERE {scopes}", "WHERE {scope:}", "WHERE {scope:1x}", "WHERE {scope:a b}",
                          "VALUES ({scope.value})"] {
            #expect(throws: StoreScope.Unscoped.self, "\(malformed)") { try Self.app.bind(malformed, [], .postgres) }
        }
    }

    /// On a real SQLite connection: each scope writes and reads only its own rows, by the
    /// same statements, and a repeated placeholder takes its one bind.
    @Test func twoScopesOnOneTableSeeOnlyTheirOwnRows() async throws {
        let path = "/tmp/receipt-store-scope-test-\(UInt64.random(in: 0...UInt64.max)).db"
        let store = try await SQLiteSubscriptionStore.open(path: path, logger: Logger(label: "store-scope-test"))
        defer { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } }
        let production = StoreScope(bundleID: "com.example.app", environment: .production)
        let other = StoreScope(bundleID: "com.example.other", environment: .production)
        // Closed before it goes, whatever the test found (SQLiteNIO asserts that it was).
        let counts: [String: [[StoreValue]]]
        do {
            counts = try await Self.rowsSeen(on: store, by: [Self.app, production, other])
        } catch {
            try await store.close()
            throw error
        }
        try await store.close()
        #expect(counts[Self.app.description] == [[.text("1"), .text("Sandbox")], [.text("2"), .text("Sandbox")]])
        #expect(counts[production.description] == [[.text("1"), .text("Production")], [.text("2"), .text("Production")]])
        #expect(counts[other.description] == [[.text("1"), .text("Production")]])
    }

    /// Each scope writes ids 1 and 2 (the last only 1), then reads what it sees.
    static func rowsSeen(on store: SQLiteSubscriptionStore, by scopes: [StoreScope]) async throws -> [String: [[StoreValue]]] {
        try await store.withStatements(transaction: true) { statements in
            _ = try await statements.run("CREATE TABLE scoped_rows (bundle_id TEXT, environment TEXT, id TEXT, PRIMARY KEY (bundle_id, environment, id))", [])
            for scope in scopes {
                let scoped = ScopedStatements(inner: statements, scope: scope)
                for id in ["1", "2"] where scope != scopes.last || id == "1" {
                    _ = try await scoped.run("INSERT INTO scoped_rows (bundle_id, environment, id) VALUES ({scope.values}, ?1)", [.text(id)])
                }
            }
            var counts: [String: [[StoreValue]]] = [:]
            for scope in scopes {
                counts[scope.description] = try await ScopedStatements(inner: statements, scope: scope).run(
                    "SELECT r.id, r.environment FROM scoped_rows AS r WHERE {scope:r} AND EXISTS "
                        + "(SELECT 1 FROM scoped_rows AS s WHERE {scope:s} AND s.id = r.id) ORDER BY r.id", [])
            }
            return counts
        }
    }
}
