/// Where a queued item stands. The raw values are what the queues' `state` columns hold and
/// what their JSON shows (`receipt events`, `GET /v1/consumption/…`); SQL takes them as
/// `state.sql`, so that no state is spelt twice.
enum DeliveryState: String, Sendable, CaseIterable {
    /// Not due: it waits for its body (a consumption request no one has answered yet). Never claimed.
    case awaiting
    /// Due at its next attempt: claimed once that has come and no lease holds it.
    case pending
    /// A webhook receiver took it (a 2xx).
    case delivered
    /// Apple took it (a consumption answer): the consumption queue's word for delivered.
    case sent
    /// Refused for good, or out of retries: sent again only by a replay.
    case failed
    /// Its deadline (Apple's 12 hours) passed before it was taken.
    case expired

    /// As a literal in SQL.
    var sql: String { "'\(rawValue)'" }

    /// The states a webhook delivery takes: what `receipt events` counts and filters by.
    static let webhook: [DeliveryState] = [.pending, .delivered, .failed]

    /// The webhook delivery state of this name (as `?state=` and `--state` give it), or nil.
    static func webhook(named name: String) -> DeliveryState? { webhook.first { $0.rawValue == name } }
}
