import HTTPTypes
import Hummingbird
import ReceiptCore

/// The outbox over HTTP: `GET /v1/events[?state=pending|delivered|failed][&limit=N][&before=SEQUENCE]`
/// lists events, most recent first; `GET /v1/events/{id}` shows one with its body and
/// deliveries (a read token). `POST /v1/events/{id}/replay` makes the event's parked (failed)
/// deliveries pending again, and with `?force=true` its delivered ones too, at most
/// EventOutbox.maxForcedReplays times, each logged with the token's fingerprint; `POST
/// /v1/events/replay-failed` every parked delivery (the write token: ServerRoutes).
struct EventsController {
    typealias Context = ServerRequestContext
    let stored: StoreResponder

    func events(_ request: Request, context: Context) async throws -> (Response, String) {
        let query = request.uri.queryParameters
        let limit = query.get("limit").map { Int($0) ?? 0 } ?? 100
        let stateName = query.get("state")
        let state = stateName.flatMap(DeliveryState.webhook(named:))
        let before = query.get("before")
        guard (1...EventOutbox.maxListedEvents).contains(limit), stateName == nil || state != nil,
              before == nil || Int64(before!) != nil else {
            return ServerAnswer.badRequest("limit is 1 to \(EventOutbox.maxListedEvents), state pending, delivered or failed, "
                                   + "and before a sequence (next_before)")
        }
        do {
            let events = try await stored.store.events(state: state, before: before.flatMap { Int64($0) }, limit: limit)
            return (ServerAnswer.json(.ok, EventsJSON.list(events, limit: limit)), "200")
        } catch {
            return ServerAnswer.storeUnavailable(error, context.logger)
        }
    }

    /// `rest`: the path under /v1/events/.
    func event(_ rest: Substring, _ request: Request, context: Context) async throws -> (Response, String) {
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
        // The route table took the method the path takes (ServerRoute's methodsUnder); only a
        // replay of one event takes `force`.
        let replaysOne = parts.count == 2 && parts[1] == "replay"
        guard parts.count == 1 || replaysOne else { return ServerAnswer.failure(.notFound, "NOT_FOUND", "no such events path") }
        let force = request.uri.queryParameters.get("force")
        guard force == nil || replaysOne else { return ServerAnswer.badRequest("force is taken by POST /v1/events/{id}/replay only") }
        guard force == nil || force == "true" else { return ServerAnswer.badRequest("force, when given, is true") }
        do {
            if parts.count == 1 && parts[0] == "replay-failed" { return try await replay(nil, force: false, stored, context: context) }
            let id = String(parts[0])
            guard Self.isEventID(id) else { return ServerAnswer.badRequest("an event id is evt_ and 32 hex digits") }
            if replaysOne { return try await replay(id, force: force == "true", stored, context: context) }
            guard let event = try await stored.store.event(id: id) else { return Self.noEvent(id) }
            return (ServerAnswer.json(.ok, EventsJSON.detail(event)), "200")
        } catch {
            return ServerAnswer.storeUnavailable(error, context.logger)
        }
    }

    private func replay(_ id: String?, force: Bool, _ stored: StoreResponder, context: Context) async throws -> (Response, String) {
        let outcome = try await stored.store.replay(eventID: id, force: force)
        if let (code, detail) = outcome.refusal(force: "?force=true") {
            let status: HTTPResponse.Status = outcome == .noSuchEvent ? .notFound : .conflict
            return ServerAnswer.failure(status, code, detail)
        }
        if force, let id {
            context.logger.notice("event \(id) sent again on purpose (force) with the write token \(context.credential ?? "none")")
        }
        guard case .replayed(let count) = outcome else { return Self.noEvent(id ?? "") }
        if count > 0 { stored.wake?.signal() }
        return (ServerAnswer.json(.ok, EventsJSON.counted("replayed_deliveries", count)), "200")
    }

    private static func noEvent(_ id: String) -> (Response, String) {
        ServerAnswer.failure(.notFound, "NOT_FOUND", "no event \(id) is stored")
    }

    static func isEventID(_ id: String) -> Bool {
        id.utf8.count == 36 && id.hasPrefix("evt_")
            && id.utf8.dropFirst(4).allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}
