#if canImport(Glibc)
import Glibc
#endif
import Logging
import Testing
@testable import ReceiptServer

/// The SQLite store's writer (SQLiteWriter): what a transaction writes reads back as written,
/// a statement SQLite refuses rolls its transaction back and leaves the next one free to run,
/// more statement texts than it keeps prepared still run, and a statement run off its thread
/// hops there.
@Suite struct SQLiteWriterTests {
    static func withStore(_ test: (SQLiteSubscriptionStore) async throws -> Void) async throws {
        let path = "/tmp/receipt-writer-test-\(UInt64.random(in: 0...UInt64.max)).db"
        let store = try await SQLiteSubscriptionStore.open(path: path, logger: Logger(label: "writer-test"))
        defer { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } }
        try await store.migrate()
        try await test(store)
        try await store.close()
    }

    static func setting(_ store: SQLiteSubscriptionStore, _ key: String) async throws -> [[StoreValue]] {
        try await store.withStatements(transaction: false) { try await $0.run("SELECT value FROM settings WHERE key = ?1", [.text(key)]) }
    }

    @Test func valuesReadBackAsWritten() async throws {
        try await Self.withStore { store in
            // A NUL inside is bound whole; the last is longer than a page (overflow pages).
            let texts = ["", "plain", "été ✓ 𝄞", "before\u{0}after", String(repeating: "j", count: 70_000)]
            let rows = try await store.withStatements(transaction: true) { statements in
                for (index, text) in texts.enumerated() {
                    _ = try await statements.run("INSERT INTO settings (key, value) VALUES (?1, ?2)", [.text("k\(index)"), .text(text)])
                }
                return try await statements.run(
                    "SELECT value, length(CAST(value AS BLOB)), ?1, ?2, NULL, 1.5 FROM settings WHERE key LIKE 'k%' ORDER BY key",
                    [.integer(Int64.min), .integer(Int64.max)])
            }
            #expect(rows.map { $0[0] } == texts.map { .text($0) })
            #expect(rows.map { $0[1] } == texts.map { .integer(Int64($0.utf8.count)) })  // stored whole, every byte
            // Integers at both ends of 64 bits; null, and a value neither text nor integer, as null.
            #expect(rows.allSatisfy { Array($0[2...]) == [.integer(Int64.min), .integer(Int64.max), .null, .null] })
            // Committed: another connection reads them.
            #expect(try await Self.setting(store, "k2") == [[.text("été ✓ 𝄞")]])
        }
    }

    @Test func aRefusedStatementRollsBackItsTransactionAndTheNextRuns() async throws {
        try await Self.withStore { store in
            await #expect(throws: SQLiteCallError.self) {
                try await store.withStatements(transaction: true) { statements in
                    _ = try await statements.run("INSERT INTO settings (key, value) VALUES ('kept', 'no')", [])
                    _ = try await statements.run("INSERT INTO no_such_table VALUES (1)", [])
                }
            }
            #expect(try await Self.setting(store, "kept").isEmpty)
            do {
                try await store.withStatements(transaction: true) { _ = try await $0.run("INSERT INTO settings (key, value) VALUES ('x', '1')", []) }
                _ = try await store.withStatements(transaction: true) { try await $0.run("INSERT INTO settings (key, value) VALUES ('x', '2')", []) }
                Issue.record("a second row of one key was written")
            } catch let error as SQLiteCallError {
                #expect(error.message.contains("UNIQUE"))
            }
            try await store.setSetting("after", "yes")
            #expect(try await Self.setting(store, "after") == [[.text("yes")]])
        }
    }

    @Test func moreStatementsThanItKeepsPreparedStillRun() async throws {
        try await Self.withStore { store in
            let count = 2 * SQLiteWriter.maxStatements + 3
            let sums = try await store.withStatements(transaction: true) { statements in
                var sums: [[StoreValue]] = []
                for round in 0..<2 {  // the second round's texts were finalized and are prepared again
                    for n in 0..<count { sums += try await statements.run("SELECT \(n) + ?1", [.integer(Int64(round))]) }
                }
                return sums
            }
            var expected: [[StoreValue]] = []
            for round in 0..<2 { for n in 0..<count { expected.append([.integer(Int64(n + round))]) } }
            #expect(sums == expected)
        }
    }

    @Test func aStatementRunOffItsThreadHopsThere() async throws {
        let path = "/tmp/receipt-writer-test-\(UInt64.random(in: 0...UInt64.max)).db"
        let writer = try await SQLiteWriter(path: path)
        defer { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } }
        // This test's task has no preference for the writer: `run` hops to its thread and back.
        #expect(try await writer.run("PRAGMA journal_mode", []) == [[.text("wal")]])
        #expect(try await writer.run("SELECT ?1 || ?2", [.text("a"), .null]) == [[.null]])
        try await writer.close()
        await #expect(throws: SQLiteCallError.self) { try await writer.run("SELECT 1", []) }
    }

    @Test func aClosedStoreRefusesWritesAtOnce() async throws {
        let path = "/tmp/receipt-writer-test-\(UInt64.random(in: 0...UInt64.max)).db"
        let store = try await SQLiteSubscriptionStore.open(path: path, logger: Logger(label: "writer-test"))
        defer { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } }
        try await store.migrate()
        try await store.close()
        // Refused rather than sent to the writer's stopped thread, where it would wait forever.
        await #expect(throws: SQLiteCallError.self) { try await store.setSetting("after", "closed") }
        await #expect(throws: SQLiteCallError.self) { try await store.migrate() }
    }
}
