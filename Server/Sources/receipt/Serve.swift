import ArgumentParser
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
            With --store, the server keeps what App Store Server Notifications tell and answers from it. \
            SIGTERM or SIGINT: stop accepting, finish the requests in flight, exit 0. The port bound is printed \
            on standard output; logs go to standard error.

            Routes (docs/serve.md says what each answers and which token it takes): \
            \(ReceiptServer.routeSummaries.joined(separator: "; ")).
            """)

    @OptionGroup(title: "Listener") var listener: ServeListenerOptions
    @OptionGroup(title: "The app") var app: ServeAppOptions
    @OptionGroup(title: "Trust") var trust: TrustOptionGroup
    @OptionGroup(title: "Store") var store: ServeStoreOptions
    @OptionGroup(title: "Credentials") var credentials: ServeCredentialOptions
    @OptionGroup(title: "App Store Server API") var api: ServeAPIOptions
    @OptionGroup(title: "Webhooks") var webhooks: WebhookOptions
    @OptionGroup(title: "Retention Messaging") var retention: ServeRetentionOptions
    @OptionGroup(title: "Refund consumption answers") var consumption: ServeConsumptionOptions
    @OptionGroup(title: "Revocation") var revocation: ServeRevocationOptions
    @OptionGroup(title: "Logs") var logs: ServeLogOptions

    @Flag(help: "Check the configuration (options, files, keys, rules, and that the store can be reached) and exit: 0 usable, 2 not, naming why. Creates and changes nothing.")
    var checkConfig = false

    /// Called by main before any task starts (see ReceiptServer.runConcurrencyOnEventLoops and
    /// ServerAllocator).
    func prepareProcess() {
        ServerAllocator.keepFreedMemoryForReuse()
        ReceiptServer.runConcurrencyOnEventLoops(workers: listener.workers ?? ServerSettings.coreCount)
    }

    func run() async throws {
        let settings = try settings()
        let logger = logs.logger()
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

    /// The options that may be given more than once.
    static let repeatableOptions: Set<String> = ["--password", "--bundle-id", "--anchor", "--webhook", "--webhook-secret-file"]

    /// The settings the flags make, each group mapping its own flags to fields; ServerSettings
    /// then judges them (`validate`), with the messages users see.
    private func settings() throws -> ServerSettings {
        do throws(ReceiptError) {
            try refuseRepeatedOptions(CommandLine.arguments.dropFirst(2), repeatable: Self.repeatableOptions)
            var policy = app.policy
            policy.revocation = revocation.revocation
            var settings = ServerSettings(verifier: try trust.verifier(policy: policy))
            listener.configure(&settings)
            try app.configure(&settings)
            revocation.configure(&settings)
            try store.configure(&settings)
            try credentials.configure(&settings)
            try api.configure(&settings, app: app)
            try retention.configure(&settings)
            try webhooks.configure(&settings)
            try consumption.configure(&settings)
            settings.accessLog = logs.accessLog
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
