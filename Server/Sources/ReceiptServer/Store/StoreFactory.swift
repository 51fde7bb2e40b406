import Logging
import ReceiptCore

/// Opens the store `location` names: a postgres:// URL, or else an SQLite file path.
/// Not yet migrated: see `SubscriptionStore.migrate`. A PostgreSQL database is reached once
/// first, so that a mistake is named at once (PostgresProblem), before a server listens and
/// not after the pool's retries.
func makeSubscriptionStore(location: StoreLocation, logger: Logger) async throws -> any SubscriptionStore {
    if let url = try location.postgres() {
        try await PostgresProblem.probe(url, logger: logger)
        return PostgresSubscriptionStore.make(location: url, logger: logger)
    }
    return try await SQLiteSubscriptionStore.open(path: location.text, logger: logger)
}

extension SubscriptionStore {
    /// `work`'s result, the store closed after it whatever `work` did: a store left open keeps
    /// its connections and threads (and SQLiteNIO's debug builds trap on a connection never closed).
    func closing<T: Sendable>(_ work: () async throws -> T) async throws -> T {
        let result: T
        do {
            result = try await work()
        } catch {
            try? await close()
            throw error
        }
        try await close()
        return result
    }
}
