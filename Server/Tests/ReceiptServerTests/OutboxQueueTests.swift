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
            for subscription in ["1000000000000001", "1000000000000001", "1000000000000002"] {
                sequences.append(try await addEvent(of: subscription, to: endpoints, on: statements))
            }
            return sequences
        }
        try await test(store, sequences)
        try await store.close()
    }

    /// An event of `subscription` made now, with a pending delivery to each of `endpoints`: its sequence.
    static func addEvent(of subscription: String, to endpoints: [String], on statements: any StoreStatements) async throws -> Int64 {
        let event = try await statements.run("""
            INSERT INTO events (event_id, event_type, ordering_key, created_at, body)
            VALUES ('evt_' || ?1 || '_' || (SELECT count(*) FROM events), 'test', ?1, ?2, '{}') RETURNING sequence
            """, [.text(subscription), .integer(now)])
        let sequence = try #require(event.first?.first?.integer)
        for endpoint in endpoints {
            _ = try await statements.run("""
                INSERT INTO deliveries (event_sequence, endpoint, ordering_key, state, attempts, next_attempt_at, lease_until, created_at)
                VALUES (?1, ?2, ?3, 'pending', 0, ?4, 0, ?4)
                """, [.integer(sequence), .text(endpoint), .text(subscription), .integer(now)])
        }
        return sequence
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

    /// An endpoint's backlog never holds up another's deliveries: each claim is one endpoint's.
    @Test func aLongBacklogOfOneEndpointDoesNotHoldUpAnother() async throws {
        try await Self.withQueue { store, _ in
            let (busy, quiet) = (Self.endpoints[0], Self.endpoints[1])
            let late = try await store.withStatements(transaction: true) { statements in
                for index in 0..<40 { _ = try await Self.addEvent(of: "20000000000000\(10 + index)", to: [busy], on: statements) }
                return try await Self.addEvent(of: "3000000000000001", to: [quiet], on: statements)
            }
            let claimed = try await store.withStatements(transaction: true) {
                try await EventOutbox.claim(endpoints: [quiet], limit: 3, leaseMilliseconds: Self.lease, on: $0, at: Self.now)
            }
            #expect(claimed.allSatisfy { $0.endpoint == quiet })
            #expect(claimed.map(\.sequence).contains(late))
            // The busy endpoint's claim is bounded by its limit, earliest first.
            let busyClaim = try await store.withStatements(transaction: true) {
                try await EventOutbox.claim(endpoints: [busy], limit: 5, leaseMilliseconds: Self.lease, on: $0, at: Self.now)
            }
            #expect(busyClaim.count == 5 && busyClaim.map(\.sequence) == busyClaim.map(\.sequence).sorted())
        }
    }

    @Test func onlyDeliveriesNeverAttemptedWhenAskedFor() async throws {
        try await Self.withQueue { store, sequences in
            let first = try await Self.claim(store, [Self.endpoints[0]], at: Self.now)
            try await Self.finish(store, first[1], .retry(at: Self.now))  // subscription 2's, attempted once
            let fresh = try await store.withStatements(transaction: true) {
                try await EventOutbox.claim(endpoints: [Self.endpoints[0]], limit: 10, leaseMilliseconds: Self.lease,
                                            firstAttemptsOnly: true, on: $0, at: Self.now + 1)
            }
            #expect(fresh.isEmpty)  // subscription 1's first is leased, its second waits for it; 2's was attempted
            #expect(try await Self.claim(store, [Self.endpoints[0]], at: Self.now + 1).map(\.sequence) == [sequences[2]])
        }
    }

    // MARK: the consumption queue

    /// Two requests Apple asked about (deadlines 12 hours after), the later-asked one first in the table.
    static func withAnswers(_ test: (SQLiteSubscriptionStore) async throws -> Void) async throws {
        try await withQueue { store, _ in
            try await store.withStatements(transaction: true) { statements in
                for (id, asked) in [("2000000000000002", now + 10), ("2000000000000001", now)] {
                    _ = try await statements.run("""
                        INSERT INTO consumption_answers (transaction_id, requested_at, deadline, state, attempts, next_attempt_at,
                          lease_until) VALUES (?1, ?2, ?3, 'awaiting', 0, 0, 0)
                        """, [.text(id), .integer(asked), .integer(asked + ConsumptionAnswer.deadlineMilliseconds)])
                }
            }
            try await test(store)
        }
    }

    static func refusal(_ given: Result<ConsumptionRow, ConsumptionOutbox.Refusal>) -> ConsumptionOutbox.Refusal? {
        if case .failure(let refusal) = given { refusal } else { nil }
    }

    static func claimAnswers(_ store: SQLiteSubscriptionStore, at now: Int64) async throws -> [ConsumptionRow] {
        try await store.withStatements(transaction: true) {
            try await ConsumptionOutbox.claim(limit: 8, leaseMilliseconds: lease, on: $0, at: now)
        }
    }

    @Test func anAnswerIsClaimedOnlyOnceGivenEarliestDeadlineFirstAndLeased() async throws {
        try await Self.withAnswers { store in
            #expect(try await Self.claimAnswers(store, at: Self.now + 20).isEmpty)  // awaiting: nothing to send
            for id in ["2000000000000002", "2000000000000001"] {
                let given = try await store.withStatements(transaction: true) {
                    try await ConsumptionOutbox.answer(transactionID: id, body: "{}", source: "app", on: $0, at: Self.now + 20)
                }
                #expect((try? given.get())?.state == .pending)
            }
            let claimed = try await Self.claimAnswers(store, at: Self.now + 20)
            #expect(claimed.map(\.transactionID) == ["2000000000000001", "2000000000000002"])
            #expect(claimed.allSatisfy { $0.attempts == 1 })
            #expect(try await Self.claimAnswers(store, at: Self.now + 20 + Self.lease - 1).isEmpty)
            // Apple could take it later: due again at its time, its attempt counted again.
            try await store.withStatements(transaction: true) {
                try await ConsumptionOutbox.finish(transactionID: "2000000000000001", state: .pending, next: Self.now + 90_000,
                                                   outcome: "HTTP 503", on: $0)
                try await ConsumptionOutbox.finish(transactionID: "2000000000000002", state: .sent, next: Self.now + 30,
                                                   outcome: "accepted", on: $0)
            }
            #expect(try await Self.claimAnswers(store, at: Self.now + 89_999).isEmpty)
            let again = try await Self.claimAnswers(store, at: Self.now + 90_000)
            #expect(again.map(\.transactionID) == ["2000000000000001"] && again[0].attempts == 2)
            // Sent: never again, and a second answer is refused.
            let second = try await store.withStatements(transaction: true) {
                try await ConsumptionOutbox.answer(transactionID: "2000000000000002", body: "{}", source: "app", on: $0, at: Self.now + 40)
            }
            #expect(Self.refusal(second) == .answered)
            let row = try await store.withStatements(transaction: false) {
                try await ConsumptionOutbox.row(transactionID: "2000000000000002", on: $0)
            }
            #expect(row?.state == .sent && row?.lastOutcome == "accepted")
        }
    }

    @Test func anAnswerAfterApplesTwelveHoursIsRefused() async throws {
        try await Self.withAnswers { store in
            let late = try await store.withStatements(transaction: true) {
                try await ConsumptionOutbox.answer(transactionID: "2000000000000001", body: "{}", source: "app", on: $0,
                                                   at: Self.now + ConsumptionAnswer.deadlineMilliseconds)
            }
            #expect(Self.refusal(late) == .expired)
            let unknown = try await store.withStatements(transaction: true) {
                try await ConsumptionOutbox.answer(transactionID: "2000000000000009", body: "{}", source: "app", on: $0, at: Self.now)
            }
            #expect(Self.refusal(unknown) == .notAsked)
        }
    }
}
