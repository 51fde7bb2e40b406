import ArgumentParser
import Foundation
import ReceiptCore

/// The App Store Connect credentials of `receipt api` and `receipt offer`: from
/// flags or, so that no key shows in `ps`, from the environment
/// (APPSTORE_ISSUER_ID, APPSTORE_KEY_ID, APPSTORE_PRIVATE_KEY_FILE, APPSTORE_BUNDLE_ID).
/// The key itself is only ever read from a file.
struct APICredentialOptions: ParsableArguments {
    @Option(help: "The issuer id (App Store Connect, Users and Access, Integrations); default $APPSTORE_ISSUER_ID.")
    var issuerId: String?

    @Option(help: "The in-app purchase key's id; default $APPSTORE_KEY_ID.")
    var keyId: String?

    @Option(help: "The in-app purchase key file (.p8, PKCS #8 PEM as downloaded); default $APPSTORE_PRIVATE_KEY_FILE.")
    var privateKeyFile: String?

    @Option(help: "The app's bundle id; default $APPSTORE_BUNDLE_ID.")
    var bundleId: String?

    /// The credentials; `issuerRequired` false for original promotional offers, which do not name it.
    func credentials(issuerRequired: Bool = true) throws(ReceiptError) -> ServerAPICredentials {
        try Self.credentials(issuerID: issuerId, keyID: keyId, keyFile: privateKeyFile, bundleID: bundleId,
                             issuerRequired: issuerRequired)
    }

    /// Each value from its flag or else its APPSTORE_* variable; the key read from its file.
    /// `flagPrefix` names the flags in errors (`receipt serve` calls them --api-…).
    static func credentials(issuerID: String?, keyID: String?, keyFile: String?, bundleID: String?,
                            issuerRequired: Bool = true, flagPrefix: String = "--") throws(ReceiptError) -> ServerAPICredentials {
        let environment = ProcessInfo.processInfo.environment
        func value(_ flag: String?, _ option: String, _ variable: String) throws(ReceiptError) -> String {
            guard let found = flag ?? environment[variable], !found.isEmpty else {
                throw ReceiptError(.invalidArgument, "\(flagPrefix)\(option) (or \(variable)) is required")
            }
            return found
        }
        let keyPath = try value(keyFile, "private-key-file", "APPSTORE_PRIVATE_KEY_FILE")
        let key = try optionFile("\(flagPrefix)private-key-file", keyPath) { $0 }
        let issuer = issuerRequired ? try value(issuerID, "issuer-id", "APPSTORE_ISSUER_ID")
                                    : issuerID ?? environment["APPSTORE_ISSUER_ID"]
        return try ServerAPICredentials(privateKeyPEM: key, keyID: try value(keyID, "key-id", "APPSTORE_KEY_ID"),
                                        issuerID: issuer, bundleID: try value(bundleID, "bundle-id", "APPSTORE_BUNDLE_ID"))
    }
}
