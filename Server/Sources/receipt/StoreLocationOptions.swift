import ArgumentParser
import ReceiptCore
import ReceiptServer

/// `--store` and where its password comes from: the store of the commands that open one
/// beside a server (`receipt sync`, `import`, `events`, `bench-store`).
struct StoreLocationOptions: ParsableArguments {
    @Option(help: "The store: an SQLite file or a postgres:// URL, as receipt serve --store.")
    var store: String

    @OptionGroup var storePassword: StorePasswordOptions

    /// The store named, checked, with its password found.
    func location() throws(ReceiptError) -> StoreLocation { try storePassword.location(store) }
}
