#if canImport(Glibc)
import Glibc
#endif
import Logging
import ReceiptCore
import Testing
@testable import ReceiptServer

/// The outbox's queue in SQL, on SQLite, at instants the test gives: a claim takes the earliest
/// pending delivery of each subscription, per endpoint; a lease holds a claimed delivery until it
/// ends; finishing one lets its subscription's next be claimed; a retry waits for its time.
@Suite struct OutboxQueueTests {
    static let now: Int64 = 1_800_000_000_000
    static let lease: Int64 = 25_000
    static let endpoints = ["https://a.example/hook", "https://b.example/hook"]

    /// A migrated store in a new file, both endpoints registered, and three events: two of
    /// subscription 1, then one of subscription 2 (their sequences, in order).
    static func withQueue(_ test: (SQLiteSubscriptionStore, [Int64]) async throws -> Void) async throws {
        let path = "/tmp/receipt-outbox-test-\(UInt64.random(in: 0...UInt64.max)).db"
        let store = try await SQLiteSubscriptionStore.open(path: path, logger: Logger(label: "outbox-test"))
        defer { for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) } }
        try await store.migrate()
        let sequences = try await store.withStatements(transaction: true) { statements in
            try await EventOutbox.register(endpoints, on: statements, at: now)
            var sequences: [Int64] = []
            for (index, subscription) in ["1000000000000001", "1000000000000001", "1000000000000002"].enumerated() {
                let event = try await statements.run("""
                    INSERT INTO events (event_id, event_type, ordering_key, created_at, body)
                    VALUES (?1, 'test', ?2, ?3, '{}') RETURNING sequence
                    """, [.text("evt_\(index)"), .text(subscription), .integer(now)])
                let sequence = try #require(event.first?.first?.integer)
                _ = try await statements.run("""
                    INSERT INTO deliveries (event_sequence, endpoint, ordering_key, state, attempts, next_attempt_at,
                      lease_until, created_at) SELECT ?1, url, ?2, 'pending', 0, ?3, 0, ?3 FROM webhook_endpoints
                    """, [.integer(sequence), .text(subscription), .integer(now)])
                sequences.append(sequence)
            }
            return sequences
        }
        try await test(store, sequences)
        try await store.close()
    }

    static func claim(_ store: SQLiteSubscriptionStore, _ endpoints: [String], at now: Int64) async throws -> [ClaimedDelivery] {
        try await store.withStatements(transaction: true) {
            try await EventOutbox.claim(endpoints: endpoints, limit: 10, leaseMilliseconds: lease, on: $0, at: now)
        }
    }

    static func finish(_ store: SQLiteSubscriptionStore, _ delivery: ClaimedDelivery, _ result: DeliveryOutcome.Result) async throws {
        try await store.withStatements(transaction: true) {
            try await EventOutbox.finish(delivery, DeliveryOutcome(result: result, detail: "test"), on: $0)
        }
    }

    @Test func aClaimTakesTheEarliestOfEachSubscriptionPerEndpoint() async throws {
        try await Self.withQueue { store, sequences in
            let claimed = try await Self.claim(store, [Self.endpoints[0]], at: Self.now)
            #expect(claimed.map(\.sequence) == [sequences[0], sequences[2]])
            #expect(claimed.allSatisfy { $0.endpoint == Self.endpoints[0] && $0.attempt == 1 })
            // The other endpoint's deliveries are its own: claimed apart, in the same order.
            #expect(try await Self.claim(store, [Self.endpoints[1]], at: Self.now).map(\.sequence) == [sequences[0], sequences[2]])
        }
    }

    @Test func aLeaseHoldsAClaimUntilItEnds() async throws {
        try await Self.withQueue { store, sequences in
            _ = try await Self.claim(store, [Self.endpoints[0]], at: Self.now)
            #expect(try await Self.claim(store, [Self.endpoints[0]], at: Self.now + Self.lease - 1).isEmpty)
            let again = try await Self.claim(store, [Self.endpoints[0]], at: Self.now + Self.lease)
            #expect(again.map(\.sequence) == [sequences[0], sequences[2]])
            #expect(again.allSatisfy { $0.attempt == 2 })
        }
    }

    @Test func finishingADeliveryLetsItsSubscriptionsNextBeClaimed() async throws {
        try await Self.withQueue { store, sequences in
            let first = try await Self.claim(store, [Self.endpoints[0]], at: Self.now)
            try await Self.finish(store, first[0], .delivered(at: Self.now + 1))
            #expect(try await Self.claim(store, [Self.endpoints[0]], at: Self.now + 2).map(\.sequence) == [sequences[1]])
        }
    }

    @Test func aRetryWaitsForItsTimeAndHoldsItsSubscriptionsLaterEvents() async throws {
        try await Self.withQueue { store, sequences in
            let first = try await Self.claim(store, [Self.endpoints[0]], at: Self.now)
            try await Self.finish(store, first[0], .retry(at: Self.now + 5_000))
            try await Self.finish(store, first[1], .delivered(at: Self.now + 1))
            #expect(try await Self.claim(store, [Self.endpoints[0]], at: Self.now + 4_999).isEmpty)
            let retried = try await Self.claim(store, [Self.endpoints[0]], at: Self.now + 5_000)
            #expect(retried.map(\.sequence) == [sequences[0]] && retried[0].attempt == 2)
            // Parked as failed: the subscription's next event goes on.
            try await Self.finish(store, retried[0], .failed(at: Self.now + 5_001))
            #expect(try await Self.claim(store, [Self.endpoints[0]], at: Self.now + 5_002).map(\.sequence) == [sequences[1]])
        }
    }
}
