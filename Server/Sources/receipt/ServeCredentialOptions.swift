import ArgumentParser
import Foundation
import ReceiptCore
import ReceiptServer

/// `receipt serve`'s credentials: the read, write and metrics tokens (ServerCredentials), each
/// from a file or the environment, never from the command line.
struct ServeCredentialOptions: ParsableArguments {
    @Option(help: "A file of bearer tokens (at least 22 characters each), one per line, one of which reads of the store (GET /v1/subscriptions, /v1/entitlements, /v1/consent, /v1/events, /v1/stats, the dashboard, /metrics) must carry as 'Authorization: Bearer TOKEN'; else $RECEIPT_READ_TOKEN. A --store needs one, or --allow-unauthenticated-reads.")
    var readTokenFile: String?

    @Option(help: "A file of write tokens (at least 22 characters each, none a read token), one per line, for what sends something or changes what will be sent (POST /v1/consumption/{id}, POST /v1/events/.../replay); else $RECEIPT_WRITE_TOKEN. Without one, those are refused.")
    var writeTokenFile: String?

    @Option(help: "A file of tokens (at least 22 characters each) that open GET /metrics alone, for a scraper; else $RECEIPT_METRICS_TOKEN. A read token opens it too.")
    var metricsTokenFile: String?

    @Flag(help: "Let anyone who reaches the server read what the store knows of customers (logged at start). Catch-up from the App Store Server API still needs a token.")
    var allowUnauthenticatedReads = false

    func configure(_ settings: inout ServerSettings) throws(ReceiptError) {
        do throws(ReceiptError) {
            settings.credentials = try ServerCredentials(
                read: try Self.tokens(file: readTokenFile, option: "--read-token-file", variable: "RECEIPT_READ_TOKEN"),
                write: try Self.tokens(file: writeTokenFile, option: "--write-token-file", variable: "RECEIPT_WRITE_TOKEN"),
                metrics: try Self.tokens(file: metricsTokenFile, option: "--metrics-token-file", variable: "RECEIPT_METRICS_TOKEN"),
                openReads: allowUnauthenticatedReads)
        } catch {
            throw ReceiptError(error.status, "\(error.detail) (--read-token-file, --write-token-file, --metrics-token-file, or "
                               + "$RECEIPT_READ_TOKEN, $RECEIPT_WRITE_TOKEN, $RECEIPT_METRICS_TOKEN)")
        }
    }

    /// The secrets of a file, one per line, blank lines ignored; refused when it holds none.
    static func secrets(inFile path: String, option: String) throws(ReceiptError) -> [String] {
        let lines = try secretFile(option, path) { String(decoding: $0, as: UTF8.self) }
            .split(whereSeparator: \.isNewline)  // "\r\n" is one Character
        let secrets = lines.map { $0.trimmingSpaces() }.filter { !$0.isEmpty }
        guard !secrets.isEmpty else {
            throw ReceiptError(.invalidArgument, "\(option) \(path): no secret in it")
        }
        return secrets
    }

    /// Tokens from `file` (its option `option`), else from the variable `variable` (one a line); none when neither.
    private static func tokens(file: String?, option: String, variable: String) throws(ReceiptError) -> [String] {
        if let file { return try secrets(inFile: file, option: option) }
        return ProcessInfo.processInfo.environment[variable]?.split(separator: "\n")
            .map { $0.trimmingSpaces() }.filter { !$0.isEmpty } ?? []
    }
}
