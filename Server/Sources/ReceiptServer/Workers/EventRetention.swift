import Logging
import ReceiptCore

/// Keeps the outbox from growing without end: events no delivery waits on are deleted
/// once older than the retention (ServerSettings.eventRetentionDays), at start and every
/// hour. Pending deliveries are never deleted, however old; several servers on one
/// database may prune at once (each batch is one transaction, and a second deletes nothing).
enum EventRetention {
    static let intervalSeconds: Int64 = 3600

    /// The instant before which events are pruned when kept `days` days.
    static func cutoff(days: Int, now: Int64 = ReceiptClock.systemNow()) -> Int64 {
        now - Int64(days) * 86_400_000
    }

    /// Prunes until cancelled (shutdown); a store that fails is tried again at the next hour.
    static func run(_ store: any SubscriptionStore, days: Int, logger: Logger) async {
        while !Task.isCancelled {
            do {
                let pruned = try await store.pruneEvents(createdBefore: cutoff(days: days))
                if pruned > 0 { logger.info("events: \(pruned) older than \(days) days pruned") }
            } catch {
                if Task.isCancelled { return }  // shutdown, even in the middle of a prune: nothing failed
                logger.warning("events: pruning failed: \(error)")
            }
            do {
                try await Task.sleep(for: .seconds(intervalSeconds))
            } catch {
                return
            }
        }
    }
}
