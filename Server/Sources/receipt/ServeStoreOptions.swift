import ArgumentParser
import ReceiptCore
import ReceiptServer

/// `receipt serve`'s store: where what notifications tell is kept, and its password.
struct ServeStoreOptions: ParsableArguments {
    @Option(help: "Where to keep what App Store Server Notifications tell: an SQLite file (created if absent) or a postgres://USER@HOST[:PORT]/DATABASE[?sslmode=verify-full&sslrootcert=FILE] URL (several servers on one database; TLS as libpq's sslmode, default prefer). Enables the notifications endpoint, GET /v1/subscriptions/{id}, GET /v1/entitlements, GET /v1/consent/{appTransactionId} and current answers on /verifyReceipt.")
    var store: String?

    @OptionGroup var storePassword: StorePasswordOptions

    func configure(_ settings: inout ServerSettings) throws(ReceiptError) {
        settings.store = try store.map { (store) throws(ReceiptError) in try storePassword.location(store) }
    }
}
