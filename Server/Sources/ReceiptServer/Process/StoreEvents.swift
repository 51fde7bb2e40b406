import Logging
import ReceiptCore

/// `receipt events`: the store's outbox, read and replayed from the command line, in
/// the JSON `GET /v1/events` answers (EventsJSON). Safe beside running servers: a
/// replay makes deliveries pending, and the servers' workers send them.
extension ReceiptServer {
    public enum EventsOperation: Sendable {
        case list(state: String?, before: Int64?, limit: Int)
        case show(id: String)
        /// One event's failed deliveries (with `force`, its delivered ones too), or with no id every failed one.
        case replay(id: String?, force: Bool)
        /// Every event older than this many days that no delivery waits on.
        case prune(olderThanDays: Int)
    }

    /// The operation's JSON; nil for `show` of an unknown event.
    public static func events(storeLocation: StoreLocation, _ operation: EventsOperation, logger: Logger) async throws -> [UInt8]? {
        try await withStore(storeLocation, logger: logger) { store in
            switch operation {
            case .list(let state, let before, let limit):
                EventsJSON.list(try await store.events(state: state.flatMap(DeliveryState.webhook(named:)), before: before, limit: limit), limit: limit)
            case .show(let id):
                try await store.event(id: id).map(EventsJSON.detail)
            case .replay(let id, let force):
                switch try await store.replay(eventID: id, force: force) {
                case .replayed(let count): EventsJSON.counted("replayed_deliveries", count)
                case let refused: throw ReplayRefused(description: refused.refusal(force: "--force")?.detail ?? "")
                }
            case .prune(let days):
                EventsJSON.counted("pruned_events", try await store.pruneEvents(createdBefore: EventRetention.cutoff(days: days)))
            }
        }
    }

    /// A replay that made nothing pending, saying why (EventOutbox.ReplayOutcome.refusal).
    public struct ReplayRefused: Error, CustomStringConvertible {
        public let description: String
    }

    /// What `receipt events` and /v1/events accept.
    public static let eventsListLimit = EventOutbox.maxListedEvents
    /// The states a delivery is in (`receipt events list --state`).
    public static let eventDeliveryStates = DeliveryState.webhook.map(\.rawValue)
    public static func isEventID(_ id: String) -> Bool { EventsController.isEventID(id) }
}
