import ReceiptCore

/// A delivery leased to this server.
struct ClaimedDelivery: Sendable {
    let sequence: Int64
    let endpoint: String
    /// 1 for the first attempt.
    let attempt: Int
    let eventID: String
    let createdAt: Int64
    let body: [UInt8]
}

/// How an attempt went, and what it leaves (`detail`: the HTTP status or the error, for `receipt events show`).
struct DeliveryOutcome: Sendable {
    enum Result: Sendable {
        case delivered(at: Int64)
        case retry(at: Int64)
        case failed(at: Int64)
    }
    let result: Result
    let detail: String
}

/// An event as `receipt events list` shows it.
struct EventSummary: Sendable {
    let sequence: Int64
    let id: String
    let type: String
    let orderingKey: String
    let createdAt: Int64
    let pending: Int64
    let delivered: Int64
    let failed: Int64

    /// The columns `init(row:)` reads, from `events AS e`: the event, then its deliveries counted by
    /// state (DeliveryState.webhook's order: pending, delivered, failed).
    static let columns = "e.sequence, e.event_id, e.event_type, e.ordering_key, e.created_at, " + DeliveryState.webhook.map {
        "(SELECT count(*) FROM deliveries AS d WHERE d.event_sequence = e.sequence AND d.state = \($0.sql))"
    }.joined(separator: ", ")

    init?(row: [StoreValue]) {
        guard row.count >= 8, let sequence = row[0].integer, let id = row[1].text, let type = row[2].text,
              let key = row[3].text, let created = row[4].integer else { return nil }
        (self.sequence, self.id, self.type, orderingKey, createdAt) = (sequence, id, type, key, created)
        (pending, delivered, failed) = (row[5].integer ?? 0, row[6].integer ?? 0, row[7].integer ?? 0)
    }
}

/// One delivery of an event.
struct DeliveryRow: Sendable {
    let endpoint: String
    let state: DeliveryState
    let attempts: Int64
    let nextAttemptAt: Int64
    let deliveredAt: Int64?
    let lastOutcome: String?

    init?(row: [StoreValue]) {
        guard row.count == 6, let endpoint = row[0].text, let state = row[1].text.flatMap(DeliveryState.init(rawValue:)), let attempts = row[2].integer,
              let next = row[3].integer else { return nil }
        (self.endpoint, self.state, self.attempts, nextAttemptAt) = (endpoint, state, attempts, next)
        deliveredAt = row[4].integer.flatMap { $0 > 0 ? $0 : nil }
        lastOutcome = row[5].text
    }
}

struct EventDetail: Sendable {
    let summary: EventSummary
    let body: String
    let deliveries: [DeliveryRow]
}
