import ReceiptCore

/// The outbox: events written in the transaction of the change they tell of (so that
/// nothing acknowledged to Apple is lost, a SIGKILL at any point included), and their
/// deliveries to the webhook endpoints registered in the store. Written once for both
/// databases over StoreStatements; the event itself is the core's (StoreEvent).
enum EventOutbox {
    /// An account's transactions an event's entitlements read (its latest): enough for what an
    /// account holds at once, few enough that a notification costs the same whatever the
    /// account's history (the whole account is a GET of /v1/entitlements away).
    static let accountTransactions = 20
    /// A subscription's transactions an event's state reads (its latest signed), beside the two
    /// its summary stands on (SubscriptionSummaries), which decide its status wherever they are
    /// in its history: a notification costs the same whatever the subscription's history.
    static let subscriptionTransactions = 20

    /// Appends the event of `cause` when it changed something, reading back what the
    /// store holds after it (the subscription, and the account its app account token names).
    static func append(_ cause: StoreEvent.Cause, originalTransactionID: String?, appAccountToken: String?,
                       on statements: some StoreStatements, at now: Int64) async throws {
        let d = statements.dialect
        var after = StoreEvent.After()
        if let originalTransactionID {
            let list = "IN (\(d.placeholder(1)))"
            let found = try await Self.subscriptions(StoreSchema.subscriptionsQuery(list, each: subscriptionTransactions,
                                                                               collate: d.collate, one: true),
                                                [.text(originalTransactionID)], on: statements)
            let deciding = try await statements.run("""
                SELECT deciding.jws FROM \(SubscriptionSummaries.table) AS summary JOIN transactions AS deciding
                  ON deciding.transaction_id IN (summary.standing_transaction_id, summary.last_transaction_id)
                WHERE summary.original_transaction_id = \(d.placeholder(1))
                """, [.text(originalTransactionID)]).compactMap { $0.first?.text }
            after.subscriptionTransactions = found.transactions + deciding.filter { !found.transactions.contains($0) }
            after.renewalInfo = found.renewalInfos.last
        }
        if let appAccountToken {
            // The account's latest, in the order of its pages (StoreSchema.accountPageQuery), with
            // each one's subscription read from its column: the JWS are decoded once, by the event.
            let page = try await statements.run("""
                SELECT original_transaction_id, jws FROM transactions WHERE app_account_token = \(d.placeholder(1))
                ORDER BY signed_date DESC, transaction_id\(d.collate) DESC LIMIT \(accountTransactions)
                """, [.text(appAccountToken)])
            after.accountTransactions = page.compactMap { $0.last?.text }
            // The account's other subscriptions' renewal infos (this one's was read above): most
            // accounts hold one subscription, and this read is then not made.
            let subscriptions = Set(page.compactMap { $0.first?.text }).subtracting([originalTransactionID].compactMap { $0 }).sorted()
            after.accountRenewalInfos = after.renewalInfo.map { [$0] } ?? []
            if !subscriptions.isEmpty {
                let list = "IN (" + d.placeholders(1...subscriptions.count).joined(separator: ", ") + ")"
                after.accountRenewalInfos += try await Self.subscriptions(StoreSchema.subscriptionsQuery(list, each: 0, collate: d.collate),
                                                                          subscriptions.map { .text($0) }, on: statements).renewalInfos
            }
        }
        let event = try StoreEvent.make(cause, after: after, at: now)
        let p = d.placeholders(1...5)
        let inserted = try await statements.run("""
            INSERT INTO events (event_id, event_type, ordering_key, created_at, body) VALUES (\(p[0]), \(p[1]), \(p[2]), \(p[3]), \(p[4]))
            RETURNING sequence
            """, [.text(event.id), .text(event.type), .text(event.orderingKey), .integer(event.createdAt),
                  .text(String(decoding: event.body, as: UTF8.self))])
        guard let sequence = inserted.first?.first?.integer else { throw OutboxError("the event's sequence was not returned") }
        _ = try await statements.run("""
            INSERT INTO deliveries (event_sequence, endpoint, ordering_key, state, attempts, next_attempt_at, lease_until, created_at)
            SELECT \(p[0]), url, \(p[1]), \(DeliveryState.pending.sql), 0, \(p[2]), 0, \(p[2]) FROM webhook_endpoints
            """, [.integer(sequence), .text(event.orderingKey), .integer(now)])
    }

    /// What a `StoreSchema.subscriptionsQuery` finds, in signing order.
    private static func subscriptions(_ sql: String, _ binds: [StoreValue], on statements: some StoreStatements) async throws
        -> StoredSubscriptions {
        StoredSubscriptions(rows: try await statements.run(sql, binds).compactMap { row in
            guard row.count == 3, let kind = row[0].integer, let signed = row[1].integer, let jws = row[2].text else { return nil }
            return StoredSubscriptions.Row(kind: kind, signedDate: signed, jws: jws)
        })
    }

    /// The events of rows learnt from the App Store Server API: one per subscription whose
    /// rows changed (`changedTransactions`, `changedRenewalInfos`: the rows the upserts wrote).
    static func appendServerAPIChanges(transactions: [StoredTransaction], renewalInfos: [StoredRenewalInfo],
                                       on statements: some StoreStatements, at now: Int64) async throws {
        let subscriptions = Set(transactions.map(\.originalTransactionID) + renewalInfos.map(\.originalTransactionID)).sorted()
        for id in subscriptions {
            let transaction = transactions.filter { $0.originalTransactionID == id }.max { $1.supersedes($0) }
            let renewal = renewalInfos.last { $0.originalTransactionID == id }
            try await append(.serverAPI(transaction: transaction, renewalInfo: renewal), originalTransactionID: id,
                             appAccountToken: transaction?.appAccountToken, on: statements, at: now)
        }
    }

    // MARK: webhook endpoints

    /// Makes the store's endpoints exactly `urls` (all servers on one database are given
    /// the same webhooks): new ones get deliveries of the events made from now on;
    /// pending deliveries to endpoints no longer given are parked as failed.
    static func register(_ urls: [String], on statements: some StoreStatements, at now: Int64) async throws {
        let d = statements.dialect
        let known = try await statements.run("SELECT url FROM webhook_endpoints", []).compactMap { $0.first?.text }
        for url in known where !urls.contains(url) {
            _ = try await statements.run("DELETE FROM webhook_endpoints WHERE url = \(d.placeholder(1))", [.text(url)])
            _ = try await statements.run("""
                UPDATE deliveries SET state = \(DeliveryState.failed.sql), lease_until = 0,
                  last_outcome = 'the endpoint is no longer configured'
                WHERE endpoint = \(d.placeholder(1)) AND state = \(DeliveryState.pending.sql)
                """, [.text(url)])
        }
        for url in urls where !known.contains(url) {
            _ = try await statements.run("INSERT INTO webhook_endpoints (url, registered_at) VALUES (\(d.placeholder(1)), \(d.placeholder(2)))",
                                         [.text(url), .integer(now)])
        }
    }

    // MARK: delivery

    /// Leases up to `limit` deliveries due now to `endpoints` (LeasedQueue.deliveries), each the
    /// earliest still pending of its endpoint and ordering key (so that no event overtakes an
    /// earlier one of its subscription), for `leaseMilliseconds`; counts the attempt.
    /// `firstAttemptsOnly`: only deliveries never attempted (an endpoint that is down: its retries
    /// wait for it to answer). In the order of the events.
    static func claim(endpoints: [String], limit: Int, leaseMilliseconds: Int64, firstAttemptsOnly: Bool = false,
                      on statements: some StoreStatements, at now: Int64) async throws -> [ClaimedDelivery] {
        guard !endpoints.isEmpty else { return [] }
        let d = statements.dialect
        let first = LeasedQueue.firstConditionPlaceholder
        let list = d.placeholders(first...(first + endpoints.count - 1)).joined(separator: ", ")
        let event = { (column: String) in "(SELECT e.\(column) FROM events AS e WHERE e.sequence = deliveries.event_sequence)" }
        let rows = try await LeasedQueue.deliveries.claim(
            returning: "event_sequence, endpoint, attempts, \(event("event_id")), \(event("created_at")), \(event("body"))",
            where: """
                candidate.endpoint IN (\(list)) AND NOT EXISTS (SELECT 1 FROM deliveries AS earlier
                  WHERE earlier.endpoint = candidate.endpoint AND earlier.ordering_key = candidate.ordering_key
                  AND earlier.state = \(DeliveryState.pending.sql) AND earlier.event_sequence < candidate.event_sequence)
                """, binds: endpoints.map { .text($0) }, firstAttemptsOnly: firstAttemptsOnly, limit: limit,
            leaseMilliseconds: leaseMilliseconds, on: statements, at: now)
        return rows.compactMap { row in
            guard row.count == 6, let sequence = row[0].integer, let endpoint = row[1].text, let attempt = row[2].integer,
                  let id = row[3].text, let created = row[4].integer, let body = row[5].text else { return nil }
            return ClaimedDelivery(sequence: sequence, endpoint: endpoint, attempt: Int(attempt), eventID: id, createdAt: created,
                                   body: Array(body.utf8))
        }.sorted { ($0.sequence, $0.endpoint) < ($1.sequence, $1.endpoint) }
    }

    /// Records how a claimed delivery went, ending its lease.
    static func finish(_ delivery: ClaimedDelivery, _ outcome: DeliveryOutcome, on statements: some StoreStatements) async throws {
        let (state, next, delivered): (DeliveryState, Int64, Int64) = switch outcome.result {
        case .delivered(let at): (.delivered, at, at)
        case .retry(let at): (.pending, at, 0)
        case .failed(let at): (.failed, at, 0)
        }
        try await LeasedQueue.deliveries.finish([.integer(delivery.sequence), .text(delivery.endpoint)], state: state, next: next,
                                                outcome: outcome.detail, also: [("delivered_at", .integer(delivered))], on: statements)
    }

    /// How many deliveries are pending, and when the oldest was made (nil: none).
    static func backlog(on statements: some StoreStatements) async throws -> (count: Int64, oldest: Int64?) {
        let row = try await statements.run("SELECT count(*), min(created_at) FROM deliveries WHERE state = \(DeliveryState.pending.sql)", []).first
        return (row?[0].integer ?? 0, row?[1].integer)
    }

    // MARK: inspection

    /// Events, most recent first: at most `limit` before sequence `before`, only those
    /// with a delivery in `state` when given.
    static func list(state: DeliveryState?, before: Int64?, limit: Int, on statements: some StoreStatements) async throws -> [EventSummary] {
        let d = statements.dialect
        let rows = try await statements.run("""
            SELECT \(EventSummary.columns) FROM events AS e
            WHERE e.sequence < \(d.placeholder(1)) AND (\(d.placeholder(2)) = '' OR EXISTS (SELECT 1 FROM deliveries AS d
              WHERE d.event_sequence = e.sequence AND d.state = \(d.placeholder(2))))
            ORDER BY e.sequence DESC LIMIT \(max(1, min(limit, maxListedEvents)))
            """, [.integer(before ?? .max), .text(state?.rawValue ?? "")])
        return rows.compactMap(EventSummary.init(row:))
    }

    static let maxListedEvents = 1000

    /// One event with its body and deliveries, by id; nil when unknown.
    static func show(eventID: String, on statements: some StoreStatements) async throws -> EventDetail? {
        let d = statements.dialect
        guard let row = try await statements.run("""
            SELECT \(EventSummary.columns), e.body FROM events AS e
            WHERE e.event_id = \(d.placeholder(1))
            """, [.text(eventID)]).first, let summary = EventSummary(row: row), let body = row.last?.text else { return nil }
        let deliveries = try await statements.run("""
            SELECT endpoint, state, attempts, next_attempt_at, delivered_at, last_outcome FROM deliveries
            WHERE event_sequence = \(d.placeholder(1)) ORDER BY endpoint
            """, [.integer(summary.sequence)]).compactMap(DeliveryRow.init(row:))
        return EventDetail(summary: summary, body: body, deliveries: deliveries)
    }

    /// The latest `limit` events of some ordering keys (subscriptions), most recent first,
    /// with their bodies: a customer's timeline (deliveries not read).
    static func latest(orderingKeys: [String], limit: Int, on statements: some StoreStatements) async throws -> [EventDetail] {
        guard !orderingKeys.isEmpty else { return [] }
        let d = statements.dialect
        let list = d.placeholders(1...orderingKeys.count).joined(separator: ", ")
        return try await statements.run("""
            SELECT \(EventSummary.columns), e.body FROM events AS e WHERE e.ordering_key IN (\(list))
            ORDER BY e.sequence DESC LIMIT \(max(1, min(limit, maxListedEvents)))
            """, orderingKeys.map { .text($0) }).compactMap { row in
            guard let summary = EventSummary(row: row), let body = row.last?.text else { return nil }
            return EventDetail(summary: summary, body: body, deliveries: [])
        }
    }

    /// Replays of an event whose deliveries all went through (`force`), at most: a delivered
    /// event is sent again only on purpose, and not without end.
    static let maxForcedReplays = 3

    /// How a replay went.
    enum ReplayOutcome: Sendable, Equatable {
        /// This many deliveries made pending, due now.
        case replayed(Int)
        /// No delivery of the event failed; this many were delivered (a replay of those needs `force`).
        case nothingFailed(delivered: Int)
        /// The event was already replayed with `force` maxForcedReplays times.
        case forcedTooOften
        case noSuchEvent

        /// Why nothing was replayed, as an error code and a sentence naming `force`, the way the caller
        /// forces a replay (`?force=true`, `--force`); nil for `replayed`.
        func refusal(force: String) -> (code: String, detail: String)? {
            switch self {
            case .replayed: nil
            case .nothingFailed(let delivered):
                ("ALREADY_DELIVERED", "no delivery of this event failed (\(delivered) delivered): a replay sends parked deliveries "
                    + "again; to send a delivered event again, force it (\(force); at most \(maxForcedReplays) times)")
            case .forcedTooOften: ("REPLAY_LIMIT", "this event was already sent again on purpose \(maxForcedReplays) times")
            case .noSuchEvent: ("NOT_FOUND", "no such event is stored")
            }
        }
    }

    /// Makes parked (failed) deliveries pending again, due now with their attempts reset: an
    /// event's (`eventID`), or with none every failed delivery. With `force`, an event's
    /// delivered ones too, counted against maxForcedReplays.
    static func replay(eventID: String?, force: Bool, on statements: some StoreStatements, at now: Int64) async throws
        -> ReplayOutcome {
        let d = statements.dialect
        let pending = "UPDATE deliveries SET state = \(DeliveryState.pending.sql), attempts = 0, next_attempt_at = \(d.placeholder(1)), lease_until = 0"
        guard let eventID else {
            return .replayed(try await statements.run("\(pending) WHERE state = \(DeliveryState.failed.sql) RETURNING event_sequence", [.integer(now)]).count)
        }
        guard let event = try await statements.run("SELECT sequence, forced_replays FROM events WHERE event_id = \(d.placeholder(1))",
                                                   [.text(eventID)]).first,
              let sequence = event[0].integer else { return .noSuchEvent }
        if force {
            guard (event[1].integer ?? 0) < maxForcedReplays else { return .forcedTooOften }
            _ = try await statements.run("UPDATE events SET forced_replays = forced_replays + 1 WHERE sequence = \(d.placeholder(1))",
                                         [.integer(sequence)])
        }
        let states = force ? "state IN (\(DeliveryState.failed.sql), \(DeliveryState.delivered.sql))" : "state = \(DeliveryState.failed.sql)"
        let replayed = try await statements.run("\(pending) WHERE event_sequence = \(d.placeholder(2)) AND \(states) RETURNING event_sequence",
                                                [.integer(now), .integer(sequence)]).count
        guard replayed == 0, !force else { return .replayed(replayed) }
        let delivered = try await statements.run(
            "SELECT COUNT(*) FROM deliveries WHERE event_sequence = \(d.placeholder(1)) AND state = \(DeliveryState.delivered.sql)",
            [.integer(sequence)]).first?.first?.integer ?? 0
        return delivered > 0 ? .nothingFailed(delivered: Int(delivered)) : .replayed(0)
    }

    /// Deletes, with their deliveries, at most `limit` events made before `createdBefore`
    /// that no delivery still waits on (pending); the number deleted. Parked (failed)
    /// deliveries go with their event: `receipt events replay` had the retention to send them.
    /// Oldest first, so repeated calls walk the table once.
    static func prune(createdBefore: Int64, limit: Int, on statements: some StoreStatements) async throws -> Int {
        let d = statements.dialect
        let sequences = try await statements.run("""
            SELECT e.sequence FROM events AS e WHERE e.created_at < \(d.placeholder(1))
              AND NOT EXISTS (SELECT 1 FROM deliveries AS d WHERE d.event_sequence = e.sequence AND d.state = \(DeliveryState.pending.sql))
            ORDER BY e.sequence LIMIT \(max(1, limit))
            """, [.integer(createdBefore)]).compactMap { $0.first?.integer }
        guard !sequences.isEmpty else { return 0 }
        let list = d.placeholders(1...sequences.count).joined(separator: ", ")
        _ = try await statements.run("DELETE FROM deliveries WHERE event_sequence IN (\(list))", sequences.map { .integer($0) })
        _ = try await statements.run("DELETE FROM events WHERE sequence IN (\(list))", sequences.map { .integer($0) })
        return sequences.count
    }

    /// Events deleted per transaction when pruning: small enough that a prune never holds
    /// the outbox long, beside servers delivering from it.
    static let prunedPerTransaction = 500

    struct OutboxError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
