import ArgumentParser
import Foundation
import Logging
import ReceiptCore
import ReceiptServer

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve verifyReceipt's protocol and a verdict endpoint over HTTP (a local stand-in for Apple's endpoint).",
        discussion: """
            POST /verifyReceipt and /sandbox/verifyReceipt answer Apple's request as Apple's production and \
            sandbox endpoints would (HTTP 200, the status in the JSON). POST /v1/verify takes a receipt (DER or \
            base64) or a JWS and answers `receipt verify --json`'s object (and the JWS payload); the query \
            parameters bundle_id, environment and app_apple_id replace the server's policy for that request. \
            GET /healthz, GET /metrics (Prometheus). SIGTERM or SIGINT: stop accepting, finish the requests in \
            flight, exit 0. The port bound is printed on standard output; logs go to standard error.
            """)

    @Option(help: "The address to listen on.")
    var host = ServerSettings.Defaults.host

    @Option(help: "The port to listen on; 0 lets the system choose.")
    var port = ServerSettings.Defaults.port

    @Option(help: "An app's shared secret for /verifyReceipt (repeatable): a receipt with auto-renewable purchases then needs one of them, or gets 21004.")
    var password: [String] = []

    @Option(help: "A file of shared secrets, one per line (blank lines ignored): as --password, without the secret showing in the process list.")
    var passwordFile: String?

    @Option(help: "A bundle id receipts and JWS must name (repeatable: any of them); not checked when omitted.")
    var bundleId: [String] = []

    @OptionGroup var trust: TrustOptionGroup

    @Option(help: "The environment /v1/verify requires (production, sandbox, xcode, local-testing); any when omitted. The verifyReceipt endpoints judge the environment themselves (21007, 21008).")
    var environment: ReceiptEnvironment?

    @Option(help: "The app's Apple id a JWS that names one must name (/v1/verify).")
    var appAppleId: Int64?

    @Option(help: "OCSP for JWS chains on /v1/verify: off (the default), soft (revoked fails; no answer passes with a warning) or hard (only good passes). Answers are cached and asked again before they expire.")
    var revocation: RevocationMode = .off

    @Option(help: "Seconds to wait for an OCSP answer.")
    var ocspTimeout = ServerSettings.Defaults.ocspTimeoutSeconds

    @Option(help: "Seconds between looks for cached OCSP answers about to expire.")
    var ocspRefreshInterval = ServerSettings.Defaults.ocspRefreshIntervalSeconds

    @Option(help: "Ask OCSP again this many seconds before a cached answer expires.")
    var ocspRefreshBefore = ServerSettings.Defaults.ocspRefreshBeforeSeconds

    @Option(help: "Where to keep what App Store Server Notifications tell: an SQLite file (created if absent) or a postgres://USER@HOST[:PORT]/DATABASE[?sslmode=verify-full&sslrootcert=FILE] URL (several servers on one database; TLS as libpq's sslmode, default prefer). Enables the notifications endpoint, GET /v1/subscriptions/{id}, GET /v1/entitlements, GET /v1/consent/{appTransactionId} and current answers on /verifyReceipt.")
    var store: String?

    @OptionGroup var storePassword: StorePasswordOptions

    @OptionGroup var webhooks: WebhookOptions

    @Option(help: "A file of bearer tokens (at least 22 characters each), one per line, one of which reads of the store (GET /v1/subscriptions, /v1/entitlements, /v1/consent, /v1/events, /v1/stats, the dashboard, /metrics) must carry as 'Authorization: Bearer TOKEN'; else $RECEIPT_READ_TOKEN. A --store needs one, or --allow-unauthenticated-reads.")
    var readTokenFile: String?

    @Option(help: "A file of write tokens (at least 22 characters each, none a read token), one per line, for what sends something or changes what will be sent (POST /v1/consumption/{id}, POST /v1/events/.../replay); else $RECEIPT_WRITE_TOKEN. Without one, those are refused.")
    var writeTokenFile: String?

    @Option(help: "A file of tokens (at least 22 characters each) that open GET /metrics alone, for a scraper; else $RECEIPT_METRICS_TOKEN. A read token opens it too.")
    var metricsTokenFile: String?

    @Flag(help: "Let anyone who reaches the server read what the store knows of customers (logged at start). Catch-up from the App Store Server API still needs a token.")
    var allowUnauthenticatedReads = false

    @Option(help: "App Store Server API calls that look-ups of unknown subscriptions may make in any minute (a look-up is at least two).")
    var apiCallsPerMinute = ServerSettings.Defaults.lookupCallsPerMinute

    @Option(help: "The path App Store Server Notifications V2 are posted to (the URL set in App Store Connect).")
    var notificationsPath = ServerSettings.Defaults.notificationsPath

    @Option(help: "The App Store Server API in-app purchase key (.p8): with it and a --store, GET /v1/subscriptions/{id} looks up a subscription no notification told of. Default $APPSTORE_PRIVATE_KEY_FILE; the key id, issuer id and bundle id come from the options below, $APPSTORE_KEY_ID, $APPSTORE_ISSUER_ID, and --bundle-id or $APPSTORE_BUNDLE_ID.")
    var apiPrivateKeyFile: String?

    @Option(help: "The App Store Server API key's id; default $APPSTORE_KEY_ID.")
    var apiKeyId: String?

    @Option(help: "The App Store Server API issuer id; default $APPSTORE_ISSUER_ID.")
    var apiIssuerId: String?

    @Option(help: "The App Store Server API's environment (production, sandbox, local-testing); default --environment, else production.")
    var apiEnvironment: ReceiptEnvironment?

    @Option(help: "Send App Store Server API calls to this URL instead of Apple's host (a mock, a proxy).")
    var apiBaseUrl: String?

    @Flag(help: "For a production App Store Server API: a look-up production does not know (its TRANSACTION_ID_NOT_FOUND) is asked of the sandbox, whose answer must verify as Sandbox, and stored beside production's rows (App Review buys in the sandbox against production servers). A look-up then counts four calls in --api-calls-per-minute.")
    var apiSandboxFallback = false

    @Option(help: "Send --api-sandbox-fallback's calls to this URL instead of Apple's sandbox host (a mock, a proxy).")
    var apiSandboxBaseUrl: String?

    @Option(help: "Retention Messaging: a rules file (JSON; README's 'Retention Messaging' section) with which the server answers Apple's realtime requests at --retention-path. Promotional offers in it are signed with the App Store Server API key (--api-private-key-file).")
    var retentionRules: String?

    @Option(help: "Answers to Apple's CONSUMPTION_REQUEST (refund requests) for products the app does not answer itself at POST /v1/consumption/{transactionId}: a JSON file (README's 'Consumption requests'), sent with the App Store Server API key (--api-private-key-file).")
    var consumptionPolicy: String?

    @Option(help: "The path Apple posts Retention Messaging realtime requests to (the realtime URL given with receipt api configure_realtime_url).")
    var retentionPath = ServerSettings.Defaults.retentionPath

    @Option(help: "The largest request body in bytes; past it /verifyReceipt answers 21002 and /v1/verify 413.")
    var maxBody = ServerSettings.Defaults.maxBodyBytes

    @Option(help: "Event-loop threads (default: the number of cores).")
    var workers: Int?

    @Option(help: "Connections served at once; past it new ones wait in the listen queue.")
    var maxConnections = ServerSettings.Defaults.maxConnections

    @Option(help: "Seconds a whole request may take to arrive, from the connection's opening or its previous response; then the connection is closed.")
    var requestTimeout = ServerSettings.Defaults.requestTimeoutSeconds

    @Flag(help: "Log every refused request's reason (why a body got 21002) on standard error (--log-level debug).")
    var verbose = false

    @Option(help: "The log's form on standard error: text (a line per event) or json (an object per line, for log collectors).")
    var logFormat: LogFormat = .text

    @Option(help: "The least severe log level written: trace, debug, info, notice, warning, error or critical (default info; --verbose is debug).")
    var logLevel: Logger.Level?

    @Flag(help: "Log one line per request (method, path without its query, status, milliseconds) at info.")
    var accessLog = false

    @Flag(help: "Check the configuration (options, files, keys, rules, and that the store can be reached) and exit: 0 usable, 2 not, naming why. Creates and changes nothing.")
    var checkConfig = false

    /// Called by main before any task starts (see ReceiptServer.runConcurrencyOnEventLoops and
    /// ServerAllocator).
    func prepareProcess() {
        ServerAllocator.keepFreedMemoryForReuse()
        ReceiptServer.runConcurrencyOnEventLoops(workers: workers ?? ServerSettings.coreCount)
    }

    func run() async throws {
        let settings = try settings()
        let json = logFormat == .json
        LoggingSystem.bootstrap { label -> any LogHandler in
            json ? JSONLogHandler(label: label) : StreamLogHandler.standardError(label: label)
        }
        var logger = Logger(label: "receipt.serve")
        logger.logLevel = logLevel ?? (verbose ? .debug : .info)
        if settings.store != nil, settings.credentials.openReads {
            logger.warning("--allow-unauthenticated-reads: anyone who reaches this server may read what the store knows of customers")
        }
        for warning in settings.startupWarnings { logger.warning("\(warning)") }
        if checkConfig {
            do {
                for line in try await ReceiptServer.checkConfiguration(settings, logger: logger) { print(line) }
                print("configuration ok")
                return
            } catch let error as ReceiptServer.StoreOpenError {
                printToStandardError("receipt: \(error)")
                throw ExitCode(unusableInputExitCode)
            }
        }
        let host = settings.host
        do {
            try await ReceiptServer.run(settings, logger: logger) { port in
                // Standard output, one line, for scripts and tests started with --port 0.
                print("listening on \(host):\(port)")
                flushStandardOutput()
            }
        } catch let error as ReceiptServer.ListenError {
            // The address is an argument: a port in use is a usage error, named.
            printToStandardError("receipt: \(error)")
            throw ExitCode(unusableInputExitCode)
        } catch let error as ReceiptServer.StoreOpenError {
            printToStandardError("receipt: \(error)")
            throw ExitCode(unusableInputExitCode)
        }
    }

    private static func secrets(inFile path: String, option: String = "--password-file") throws(ReceiptError) -> [String] {
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

    /// The read, write and metrics tokens (ServerCredentials).
    private func credentials() throws(ReceiptError) -> ServerCredentials {
        let read = try Self.tokens(file: readTokenFile, option: "--read-token-file", variable: "RECEIPT_READ_TOKEN")
        do throws(ReceiptError) {
            return try ServerCredentials(
                read: read, write: try Self.tokens(file: writeTokenFile, option: "--write-token-file", variable: "RECEIPT_WRITE_TOKEN"),
                metrics: try Self.tokens(file: metricsTokenFile, option: "--metrics-token-file", variable: "RECEIPT_METRICS_TOKEN"),
                openReads: allowUnauthenticatedReads)
        } catch {
            throw ReceiptError(error.status, "\(error.detail) (--read-token-file, --write-token-file, --metrics-token-file, or "
                               + "$RECEIPT_READ_TOKEN, $RECEIPT_WRITE_TOKEN, $RECEIPT_METRICS_TOKEN)")
        }
    }

    /// --api-sandbox-fallback's client: the same key, Apple's sandbox (or --api-sandbox-base-url),
    /// and the server's verifier requiring the sandbox. Nil without the flag.
    private func sandboxFallbackClient(_ keys: ServerAPICredentials, verifier: ReceiptVerifier) throws(ReceiptError) -> ServerAPIClient? {
        guard apiSandboxFallback else {
            guard apiSandboxBaseUrl == nil else {
                throw ReceiptError(.invalidArgument, "--api-sandbox-base-url needs --api-sandbox-fallback")
            }
            return nil
        }
        var policy = verifier.policy
        policy.environment = .sandbox
        return try ServerAPIClient(credentials: keys, environment: .sandbox, baseURL: apiSandboxBaseUrl,
                                   verifier: verifier.with(policy: policy))
    }

    /// --retention-rules: the realtime endpoint, verifying with the server's verifier and
    /// signing offers with the App Store Server API key when the rules offer any.
    private func configureRetention(_ settings: inout ServerSettings) throws(ReceiptError) {
        guard let retentionRules else { return }
        settings.retentionPath = retentionPath
        let rules = try optionFile("--retention-rules", retentionRules) { (bytes) throws(ReceiptError) in
            try RetentionRules(json: bytes)
        }
        do throws(ReceiptError) {
            settings.retention = try RetentionEndpoint(verifier: settings.verifier, rules: rules,
                                                       offerCredentials: settings.serverAPI?.credentials)
        } catch {
            throw ReceiptError(error.status, "--retention-rules \(retentionRules): \(error.detail) (--api-private-key-file)")
        }
    }

    /// The options that may be given more than once.
    static let repeatableOptions: Set<String> = ["--password", "--bundle-id", "--anchor", "--webhook", "--webhook-secret-file"]

    private func settings() throws -> ServerSettings {
        do throws(ReceiptError) {
            try refuseRepeatedOptions(CommandLine.arguments.dropFirst(2), repeatable: Self.repeatableOptions)
            var policy = VerificationPolicy(bundleID: bundleId.first, environment: environment, appAppleID: appAppleId)
            policy.revocation = revocation
            policy.otherBundleIDs = Array(bundleId.dropFirst())
            var settings = ServerSettings(verifier: try trust.verifier(policy: policy))
            settings.host = host
            settings.port = port
            settings.sharedSecrets = password + (try passwordFile.map { (path) throws(ReceiptError) in try Self.secrets(inFile: path) } ?? [])
            settings.maxBodyBytes = maxBody
            settings.workers = workers ?? ServerSettings.coreCount
            settings.maxConnections = maxConnections
            settings.requestTimeoutSeconds = requestTimeout
            settings.ocspTimeoutSeconds = ocspTimeout
            settings.ocspRefreshIntervalSeconds = ocspRefreshInterval
            settings.ocspRefreshBeforeSeconds = Int64(ocspRefreshBefore)
            settings.store = try store.map { (store) throws(ReceiptError) in try storePassword.location(store) }
            settings.credentials = try credentials()
            settings.lookupCallsPerMinute = apiCallsPerMinute
            settings.notificationsPath = notificationsPath
            settings.accessLog = accessLog
            if apiPrivateKeyFile != nil || ProcessInfo.processInfo.environment["APPSTORE_PRIVATE_KEY_FILE"] != nil {
                let keys = try APICredentialOptions.credentials(issuerID: apiIssuerId, keyID: apiKeyId, keyFile: apiPrivateKeyFile,
                                                                bundleID: bundleId.first, flagPrefix: "--api-")
                let apiEnvironment = apiEnvironment ?? environment ?? .production
                settings.serverAPI = try ServerAPIClient(credentials: keys, environment: apiEnvironment,
                                                         baseURL: apiBaseUrl, verifier: settings.verifier)
                settings.serverAPISandboxFallback = try sandboxFallbackClient(keys, verifier: settings.verifier)
            } else if apiSandboxFallback || apiSandboxBaseUrl != nil {
                throw ReceiptError(.invalidArgument, "--api-sandbox-fallback needs App Store Server API credentials (--api-private-key-file)")
            }
            try configureRetention(&settings)
            try webhooks.configure(&settings)
            if let consumptionPolicy {
                settings.consumptionPolicy = try optionFile("--consumption-policy", consumptionPolicy) { (bytes) throws(ReceiptError) in
                    try ConsumptionPolicy(json: bytes)
                }
            }
            try settings.validate()
            return settings
        } catch {
            throw failOption(error)
        }
    }
}

extension Substring {
    /// Without the spaces and tabs around it (no Foundation).
    func trimmingSpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        return String(drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}

/// `--log-format`.
enum LogFormat: String, ExpressibleByArgument {
    case text, json
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
