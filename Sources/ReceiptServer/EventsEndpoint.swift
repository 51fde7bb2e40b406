import HTTPTypes
import Hummingbird
import ReceiptCore

/// The outbox over HTTP, for a caller with a read token: `GET /v1/events[?state=pending|
/// delivered|failed][&limit=N][&before=SEQUENCE]` lists events, most recent first;
/// `GET /v1/events/{id}` shows one with its body and deliveries; `POST
/// /v1/events/{id}/replay` (or `/v1/events/replay-failed`) makes deliveries pending
/// again. Replaying is a write: it takes a token even where reads are open.
extension ReceiptResponder {
    static let eventsPath = "/v1/events"

    static func isEventsPath(_ path: String) -> Bool { path == eventsPath || path.hasPrefix(eventsPath + "/") }

    func events(_ path: String, _ request: Request, context: Context) async throws -> (Response, String) {
        guard let stored else { return Self.noStore() }
        let caller = reads.caller(of: request.headers)
        guard caller != .refused else { return Self.unauthorized() }
        let rest = path.dropFirst(Self.eventsPath.count)
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        do {
            switch (request.method, parts.count) {
            case (.get, 0):
                let query = request.uri.queryParameters
                let limit = query.get("limit").map { Int($0) ?? 0 } ?? 100
                let state = query.get("state")
                let before = query.get("before")
                guard (1...EventOutbox.maxListedEvents).contains(limit), state == nil || EventSummary.deliveryStates.contains(state!),
                      before == nil || Int64(before!) != nil else {
                    return Self.badRequest("limit is 1 to \(EventOutbox.maxListedEvents), state pending, delivered or failed, "
                                           + "and before a sequence (next_before)")
                }
                let events = try await stored.store.events(state: state, before: before.flatMap { Int64($0) }, limit: limit)
                return (Self.json(.ok, EventsJSON.list(events, limit: limit)), "200")
            case (.get, 1):
                let id = String(parts[parts.startIndex])
                guard Self.isEventID(id) else { return Self.badRequest("an event id is evt_ and 32 hex digits") }
                guard let event = try await stored.store.event(id: id) else {
                    return (Self.json(.notFound, NotificationEndpoint.failure("NOT_FOUND", "no event \(id) is stored")), "404")
                }
                return (Self.json(.ok, EventsJSON.detail(event)), "200")
            case (.post, 1) where parts.last == "replay-failed", (.post, 2) where parts.last == "replay":
                guard caller == .authenticated else { return Self.unauthorized() }
                let id = parts.count == 2 ? String(parts[parts.startIndex]) : nil
                if let id, !Self.isEventID(id) { return Self.badRequest("an event id is evt_ and 32 hex digits") }
                let count = try await stored.store.replay(eventID: id)
                stored.wake?.signal()
                return (Self.json(.ok, EventsJSON.counted("replayed_deliveries", count)), "200")
            case (.get, _), (.post, _):
                return (Self.json(.notFound, NotificationEndpoint.failure("NOT_FOUND", "no such events path")), "404")
            default:
                return (Self.methodNotAllowed(allow: "GET, POST"), "405")
            }
        } catch {
            return Self.storeUnavailable(error, context)
        }
    }

    static func isEventID(_ id: String) -> Bool {
        id.utf8.count == 36 && id.hasPrefix("evt_")
            && id.utf8.dropFirst(4).allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}
