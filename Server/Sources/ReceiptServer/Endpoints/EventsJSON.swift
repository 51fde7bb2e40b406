@_spi(ReceiptInternal) import ReceiptCore

/// The outbox as JSON, for `GET /v1/events` and `receipt events`: the same shape both ways.
enum EventsJSON {
    static func list(_ events: [EventSummary], limit: Int) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.beginArray("events")
        for event in events { write(event, into: &writer) }
        writer.endArray()
        // The next page: events before the last one listed.
        if events.count >= limit, let last = events.last { writer.string("next_before", String(last.sequence)) }
        writer.endObject()
        return writer.bytes
    }

    static func detail(_ event: EventDetail) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        write(event.summary, into: &writer, open: false)
        writer.beginArray("deliveries")
        for delivery in event.deliveries {
            writer.beginObject()
            writer.string("endpoint", WebhookURL.shown(delivery.endpoint))
            writer.string("state", delivery.state.rawValue)
            writer.number("attempts", delivery.attempts)
            if delivery.state == .pending { writer.number("next_attempt_at_ms", delivery.nextAttemptAt) }
            if let delivered = delivery.deliveredAt { writer.number("delivered_at_ms", delivered) }
            if let outcome = delivery.lastOutcome { writer.string("last_outcome", outcome) }
            writer.endObject()
        }
        writer.endArray()
        writer.raw("body", Array(event.body.utf8))
        writer.endObject()
        return writer.bytes
    }

    /// `{"replayed_deliveries": n}`, `{"pruned_events": n}`: what an operation changed.
    static func counted(_ key: String, _ count: Int) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.number(key, Int64(count))
        writer.endObject()
        return writer.bytes
    }

    private static func write(_ event: EventSummary, into writer: inout JSONWriter, open: Bool = true) {
        if open { writer.beginObject() }
        writer.string("id", event.id)
        writer.string("type", event.type)
        writer.string("sequence", String(event.sequence))
        writer.string("ordering_key", event.orderingKey)
        writer.number("created_at_ms", event.createdAt)
        writer.number("pending", event.pending)
        writer.number("delivered", event.delivered)
        writer.number("failed", event.failed)
        if open { writer.endObject() }
    }
}
