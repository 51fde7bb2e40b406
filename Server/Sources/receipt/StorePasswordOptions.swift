import ArgumentParser
import Foundation
import ReceiptCore
import ReceiptServer

/// Where a PostgreSQL store's password comes from, never the command line:
/// `--store-password-file`, else `$PGPASSWORD`, else the password file
/// `$PGPASSFILE` (default ~/.pgpass), as libpq reads them.
struct StorePasswordOptions: ParsableArguments {
    @Option(help: "A file whose first line is the PostgreSQL store's password (else $PGPASSWORD, else $PGPASSFILE or ~/.pgpass). A postgres:// URL with a password in it is refused: it would show in the process list.")
    var storePasswordFile: String?

    /// `text` (the --store option) checked, with its password found.
    func location(_ text: String) throws(ReceiptError) -> StoreLocation {
        let environment = ProcessInfo.processInfo.environment
        let password: String? = try storePasswordFile.map { (path) throws(ReceiptError) in
            try secretFile("--store-password-file", path) { bytes in
                String(String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline).first ?? "")
            }
        } ?? environment["PGPASSWORD"].flatMap { $0.isEmpty ? nil : $0 }
        var passFile: String?
        if password == nil, StoreLocation.isPostgres(text) {
            let path = environment["PGPASSFILE"] ?? environment["HOME"].map { $0 + "/.pgpass" }
            passFile = path.flatMap { try? InputFile.read($0) }.map { String(decoding: $0, as: UTF8.self) }
        }
        return try StoreLocation(text, password: password, passFile: passFile)
    }
}
