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
            on standard output once the store (with --store) is migrated and ready; logs go to standard error.

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

    @Option(help: ArgumentHelp("Take every setting from this YAML file instead of the flags above (docs/serve.md lists its keys; dist/receipt.yaml is an example); relative paths in it are from its folder.", valueName: "file"))
    var config: String?

    @Flag(help: "Check the configuration (options, files, keys, rules, and that the store can be reached) and exit: 0 usable, 2 not, naming why. Creates and changes nothing.")
    var checkConfig = false

    @Flag(help: "Print the settings the server would run with (defaults included, secrets not shown) and exit.")
    var printConfig = false

    /// The flags that may stand beside --config: the file gives every setting.
    static let flagsBesideConfig: Set<String> = ["--config", "--check-config", "--print-config"]

    /// Called by main before any task starts (see ReceiptServer.runConcurrencyOnEventLoops and
    /// ServerAllocator). A file that does not read is reported by `run`.
    func prepareProcess() {
        ServerAllocator.keepFreedMemoryForReuse()
        let workers = (try? configured())?.command.listener.workers ?? listener.workers
        ReceiptServer.runConcurrencyOnEventLoops(workers: workers ?? ServerSettings.coreCount)
    }

    func run() async throws {
        let configured: (command: Serve, file: ServeConfigFile?)
        do throws(ReceiptError) {
            configured = try self.configured()
        } catch {
            throw failOption(error)
        }
        let settings = try configured.command.settings(file: configured.file)
        if printConfig {
            for line in settings.summaryLines { print(line) }
            return
        }
        let logger = configured.command.logs.logger()
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

    /// This command as the flags gave it, or, with --config, as the file's keys give it (the
    /// same flags, read from the file: ServeConfigFile).
    private func configured() throws(ReceiptError) -> (command: Serve, file: ServeConfigFile?) {
        guard let config else { return (self, nil) }
        if let other = optionNames(CommandLine.arguments.dropFirst(2)).first(where: { !Self.flagsBesideConfig.contains($0) }) {
            throw ReceiptError(.invalidArgument, "\(other) is given with --config, which gives every setting: set it in \(config)")
        }
        let file = try ServeConfigFile(path: config)
        do {
            return (try Serve.parse(file.arguments), file)
        } catch {
            throw ReceiptError(.invalidArgument, file.located(Serve.message(for: error)))
        }
    }

    /// The settings the flags (or the file's keys) make, each group mapping its own flags to
    /// fields; ServerSettings then judges them (`validate`), with the messages users see, which
    /// name the file, line and key of the setting when a file made it.
    private func settings(file: ServeConfigFile?) throws -> ServerSettings {
        do throws(ReceiptError) {
            try refuseRepeatedOptions(file?.arguments ?? Array(CommandLine.arguments.dropFirst(2)), repeatable: Self.repeatableOptions)
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
            guard let file else { throw failOption(error) }
            throw failOption(ReceiptError(error.status, file.located(error.detail)))
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
