#if canImport(Glibc)
import Glibc
#endif
import Logging
import ReceiptCore
import Testing
@testable import ReceiptServer

/// StorePointReads on SQLite: a point read its quick reads can make is answered now, one
/// they hand on (more rows than a quick read steps through) later, with the same answer as
/// the store's pooled read; "no such row" read now is an answer, not a hand-on.
@Suite struct StorePointReadsTests {
    static let subscriptions = ["3000000000000001", "3000000000000002"]
    /// An app transaction's payload (id 704000000000001) between a header and a signature
    /// that are never read: a stored row was verified when it arrived.
    static let appTransaction = "eyJhbGciOiJFUzI1NiJ9.eyJhcHBUcmFuc2FjdGlvbklkIjoiNzA0MDAwMDAwMDAwMDAxIiwiYnVuZGxlSWQiOiJjb20uZXhhbXBsZS5hcHAiLCJyZWNlaXB0VHlwZSI6IlByb2R1Y3Rpb24iLCJvcmlnaW5hbEFwcGxpY2F0aW9uVmVyc2lvbiI6IjEiLCJvcmlnaW5hbFB1cmNoYXNlRGF0ZSI6MTcwMDAwMDAwMDAwMCwicmVjZWlwdENyZWF0aW9uRGF0ZSI6MTcwMDAwMDAwMDAwMCwiYXBwbGljYXRpb25WZXJzaW9uIjoiMSIsInJlcXVlc3REYXRlIjoxNzAwMDAwMDAwMDAwLCJvcmlnaW5hbFBsYXRmb3JtIjoiaU9TIn0.c2ln"

    /// A migrated store in a new file holding 90 transactions of each of `subscriptions`
    /// and one withdrawal of consent.
    static func withReads(_ test: (StorePointReads) async throws -> Void) async throws {
        let path = "/tmp/receipt-point-reads-test-\(UInt64.random(in: 0...UInt64.max)).db"
        let inner = try await SQLiteSubscriptionStore.open(path: path, logger: Logger(label: "point-reads-test"))
        defer { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } }
        try await inner.migrate()
        try await inner.withStatements(transaction: true) { statements in
            for (number, subscription) in subscriptions.enumerated() {
                for index in 0..<90 {
                    _ = try await statements.run("""
                        INSERT INTO transactions (transaction_id, original_transaction_id, product_id, app_account_token,
                          signed_date, jws) VALUES (?1, ?2, 'monthly', NULL, ?3, ?4)
                        """, [.text("\(subscription)-\(index)"), .text(subscription), .integer(Int64(1_000 * number + index)),
                              .text("jws-\(subscription)-\(index)")])
                }
            }
            _ = try await statements.run("""
                INSERT INTO consent_rescissions (app_transaction_id, notification_uuid, signed_date, jws)
                VALUES ('704000000000001', 'uuid-1', 7, ?1)
                """, [.text(appTransaction)])
        }
        try await test(StorePointReads(store: DeadlineStore(inner: inner, seconds: 5)))
        try await inner.close()
    }

    static func isNow<Answer>(_ reply: NowOrLater<Answer>) -> Bool {
        if case .now = reply { true } else { false }
    }

    @Test func aSubscriptionIsReadNowAndTooManyRowsAreHandedOnWithTheSameAnswer() async throws {
        try await Self.withReads { reads in
            let one = try reads.subscriptions([Self.subscriptions[0]], transactionsEach: 100)
            #expect(Self.isNow(one))
            #expect(try await one.answer().transactions.count == 90)
            // 180 rows: more than a quick read steps through (SQLiteQuickReads.maxRows).
            let both = try reads.subscriptions(Self.subscriptions, transactionsEach: 100)
            #expect(!Self.isNow(both))
            let pooled = try await reads.store.subscriptions(Self.subscriptions, transactionsEach: 100)
            #expect(try await both.answer().transactions == pooled.transactions)
            #expect(pooled.transactions.count == 180)
            #expect(Self.isNow(try reads.subscriptions([], transactionsEach: 100)))
        }
    }

    @Test func aConsentAndItsAbsenceAreBothAnsweredNow() async throws {
        try await Self.withReads { reads in
            let stored = try reads.consentRescission(appTransactionID: "704000000000001")
            #expect(Self.isNow(stored))
            #expect(try await stored.answer()?.notificationUUID == "uuid-1")
            let absent = try reads.consentRescission(appTransactionID: "704000000000002")
            #expect(Self.isNow(absent))
            #expect(try await absent.answer() == nil)
        }
    }

}
