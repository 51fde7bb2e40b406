#if canImport(Glibc)
import Glibc
#endif
import Logging
import ReceiptCore

/// What `receipt serve` says before it serves: warnings for settings that refuse or accept
/// more than an operator likely meant, and `--check-config`, which reaches the store the
/// way the server would and then stops.
extension ServerSettings {
    /// One line each for a setting that makes the server refuse, or accept, more than it
    /// seems to: the operator reads them in the log at start.
    public var startupWarnings: [String] {
        var warnings: [String] = []
        let policy = verifier.policy
        if policy.appAppleID == nil, policy.environment == nil || policy.environment == .production {
            warnings.append("no --app-apple-id: every production JWS that names an app (transactions, notifications) "
                            + "is refused on /v1/verify and the notifications path; give the app's Apple id")
        }
        if policy.bundleID == nil {
            warnings.append("no --bundle-id: /v1/verify and /verifyReceipt accept receipts and JWS of any app "
                            + "signed by the anchors")
        }
        if store != nil, serverAPI == nil {
            warnings.append("no App Store Server API key (--api-private-key-file): CONSUMPTION_REQUEST refund requests are "
                            + "stored and POST /v1/consumption takes answers, but none is sent to Apple")
        }
        return warnings
    }
}

extension ReceiptServer {
    /// `--check-config`: the settings were read and checked already (files, keys, rules);
    /// this reaches the store as the server would (PostgreSQL: one connection; SQLite:
    /// the file, or its directory, writable) without creating or changing anything.
    /// Returns what the server would do; throws StoreOpenError naming what would stop it.
    public static func checkConfiguration(_ settings: ServerSettings, logger: Logger) async throws -> [String] {
        try settings.validate()
        var lines = ["listen on \(settings.host):\(settings.port)"]
        if let location = settings.store {
            do {
                if let url = try location.postgres() {
                    try await PostgresProblem.probe(url, logger: logger)
                } else {
                    try checkWritable(location.text)
                }
            } catch {
                throw StoreOpenError(location: location, reason: "\(error)")
            }
            lines.append("store \(location) reachable; notifications at \(settings.notificationsPath)")
        }
        if settings.retention != nil { lines.append("Retention Messaging answers at \(settings.retentionPath)") }
        if settings.serverAPI != nil { lines.append("App Store Server API look-ups on (the key was read; Apple is not asked)") }
        for webhook in settings.webhooks { lines.append("events delivered to \(WebhookURL.shown(webhook.url))") }
        if let policy = settings.consumptionPolicy {
            lines.append("CONSUMPTION_REQUEST answered from the policy where the app does not (consent: \(policy.consentCollected))")
        }
        return lines
    }

    /// An SQLite store can be opened: the file readable and writable, or its directory writable.
    private static func checkWritable(_ path: String) throws(ReceiptError) {
        if access(path, F_OK) == 0 {
            guard access(path, R_OK | W_OK) == 0 else { throw ReceiptError(.invalidArgument, "\(path) is not readable and writable") }
            return
        }
        let directory = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
        guard access(directory.isEmpty ? "/" : directory, W_OK | X_OK) == 0 else {
            throw ReceiptError(.invalidArgument, "the directory \(directory.isEmpty ? "/" : directory) does not exist or is not writable")
        }
    }
}
