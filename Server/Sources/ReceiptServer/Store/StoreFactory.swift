import Logging
import ReceiptCore

/// Opens the store `location` names: a postgres:// URL, or else an SQLite file path.
/// Not yet migrated: see `SubscriptionStore.migrate`.
func makeSubscriptionStore(location: StoreLocation, logger: Logger) async throws -> any SubscriptionStore {
    if location.isPostgres {
        var url = try PostgresLocation(location.text)
        url.password = location.password
        return PostgresSubscriptionStore.make(location: url, logger: logger)
    }
    return try await SQLiteSubscriptionStore.open(path: location.text, logger: logger)
}
