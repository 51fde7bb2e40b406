import CConcurrencyHook
#if canImport(Glibc)
import Glibc
#endif
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import ReceiptCore
import ReceiptServerAPIClient
import ServiceLifecycle
import Synchronization
import UnixSignals

/// `receipt serve`: an HTTP/1.1 server on Hummingbird 2 (SwiftNIO) around the
/// core's endpoints. Stateless: any number can run behind a load balancer.
///
/// Lives in the CLI only; libreceipt.so has no HTTP code and none of these packages.
public enum ReceiptServer {
    /// Serves until SIGTERM or SIGINT, then stops accepting, lets the requests in
    /// flight finish, and returns. `onListening` gets the port bound (useful with port 0), once
    /// the store (when there is one) is ready too (ServerReadiness).
    public static func run(_ settings: ServerSettings, logger: Logger,
                           onListening: @escaping @Sendable (Int) -> Void) async throws {
        try settings.validate()
        let metrics = ServerMetrics()
        var store: DeadlineStore?
        if let location = settings.store {
            do {
                store = DeadlineStore(inner: try await makeSubscriptionStore(location: location, logger: logger),
                                      seconds: settings.storeOperationTimeoutSeconds)
            } catch {
                throw StoreOpenError(location: location, reason: "\(error)")
            }
        }
        var catchUp: StoreCatchUp?
        if let store, let api = settings.serverAPI {
            let fallback = settings.serverAPISandboxFallback
            catchUp = StoreCatchUp(client: AppStoreServerAPIClient(api, timeout: .seconds(StoreCatchUp.exchangeSeconds),
                                                                   sandboxFallback: fallback),
                                   store: store, callsPerMinute: settings.lookupCallsPerMinute)
        }
        let wake: WakeSignal? = store != nil && !settings.webhooks.isEmpty ? WakeSignal() : nil
        let consumptionWake: WakeSignal? = store != nil && settings.serverAPI != nil ? WakeSignal() : nil
        // NIO's singleton group when it runs Swift concurrency too; otherwise (tests, or a
        // caller that started tasks first) a group of our own, and handlers hop to the pool.
        let ownGroup = concurrencyOnEventLoops ? nil : MultiThreadedEventLoopGroup(numberOfThreads: max(1, settings.workers))
        let group = ownGroup ?? MultiThreadedEventLoopGroup.singleton
        logger.debug(concurrencyOnEventLoops ? "Swift concurrency runs on the server's event loops"
                                             : "Swift concurrency runs on its own threads; handlers hop to them")
        let limit = TimeAmount.seconds(Int64(max(1, settings.requestTimeoutSeconds)))
        let chunkRefusal = ChunkedBodyLimitHandler.serverRefusal(maxBodyBytes: settings.maxBodyBytes,
                                                                routes: ServerRoutes(settings: settings))
        let readiness = ServerReadiness(storeReady: store == nil, announce: onListening)
        let app = Application(
            responder: ReceiptResponder(settings: settings, metrics: metrics, store: store, readiness: readiness, catchUp: catchUp,
                                        wake: wake, consumptionWake: consumptionWake),
            server: .http1(configuration: .init(additionalChannelHandlers: [
                RequestDeadlineHandler(limit: limit), ExpectContinueHandler(maxBodyBytes: settings.maxBodyBytes),
                ChunkedBodyLimitHandler.Installer(maxBodyBytes: settings.maxBodyBytes, refusal: chunkRefusal),
            ])),
            configuration: ApplicationConfiguration(
                address: .hostname(settings.host, port: settings.port),
                serverName: nil,
                availableConnectionsDelegate: MaximumAvailableConnections(max(1, settings.maxConnections))),
            onServerRunning: { channel in readiness.bound(port: channel.localAddress?.port ?? settings.port) },
            eventLoopGroupProvider: .shared(group),
            logger: logger)
        do {
            // The store's connections (store.run) outlive the tasks that use them: those are cancelled
            // and waited for first, so that none waits for a connection the pool no longer makes.
            try await withThrowingTaskGroup(of: Void.self) { storeTasks in
                if let store { storeTasks.addTask { await store.run() } }
                let service = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [.sigterm, .sigint],
                                                                logger: logger))
                // Why the store could not be used, kept before the service is shut down for it, so that
                // it is thrown whichever task the group hands back first.
                let failure = KeptFailure()
                // Each task says whether it is the service: it ends on a signal (or when a store that
                // cannot be used shuts it down); the others when cancelled.
                try await withThrowingTaskGroup(of: Bool.self) { tasks in
                    tasks.addTask { try await service.run(); return true }
                    if let store, let location = settings.store {
                        tasks.addTask {
                            do {
                                try await prepare(store, at: location, settings)
                            } catch {
                                // Cancelled: the server is stopping (a signal), and that is no failure.
                                if !Task.isCancelled { failure.keep(error) }
                                // The requests in flight (each answered 503: the store is not ready) finish first.
                                await service.triggerGracefulShutdown()
                                return false
                            }
                            readiness.storeIsReady()
                            await runWorkers(on: store, settings, metrics: metrics, wake: wake,
                                             consumptionWake: consumptionWake, logger: logger)
                            return false
                        }
                    }
                    if settings.verifier.policy.revocation != .off {
                        tasks.addTask { await refreshRevocation(settings, metrics: metrics, logger: logger); return false }
                    }
                    while let isService = try await tasks.next(), !isService {}
                    tasks.cancelAll()
                }
                storeTasks.cancelAll()
                if let failure = failure.kept { throw failure }
            }
        } catch {
            // Whatever ended the server (a store that would not open, a port it cannot listen on), its
            // threads and its store's connections end with it.
            try? await ownGroup?.shutdownGracefully()
            try? await store?.close()
            throw listenError(error, settings) ?? error
        }
        try await ownGroup?.shutdownGracefully()
        try await store?.close()
    }

    /// An error one task keeps for another to throw.
    private final class KeptFailure: Sendable {
        private let error = Mutex<(any Error)?>(nil)
        func keep(_ error: any Error) { self.error.withLock { $0 = error } }
        var kept: (any Error)? { error.withLock { $0 } }
    }

    /// What the store needs before the server may use it: its schema migrated, its claim made,
    /// the server's webhooks registered (each event accepted after gets a delivery to each).
    private static func prepare(_ store: DeadlineStore, at location: StoreLocation, _ settings: ServerSettings) async throws {
        do {
            // No deadline: a migration reads every row once (facts, summaries), minutes on a large
            // store; the server answers meanwhile (ServerReadiness). A PostgreSQL server that does not
            // answer was named when the store was opened (its probe has a deadline of its own); SQLite
            // waits on a locked file for its busy timeout only.
            try await store.migrate()
        } catch {
            throw StoreOpenError(location: location, reason: "\(error)")
        }
        if let claim = storeClaim(settings.verifier.policy),
           let refusal = try await store.withStatements(transaction: true, { try await StoreIdentity.claim(claim, on: $0) }) {
            throw StoreOpenError(location: location, reason: refusal)
        }
        guard !settings.webhooks.isEmpty else { return }
        do {
            try await store.registerWebhooks(settings.webhooks.map(\.url))
        } catch {
            throw StoreOpenError(location: location, reason: "cannot register the webhooks: \(error)")
        }
    }

    /// The store's workers, until cancelled: event retention, webhook deliveries, consumption answers.
    private static func runWorkers(on store: DeadlineStore, _ settings: ServerSettings, metrics: ServerMetrics,
                                   wake: WakeSignal?, consumptionWake: WakeSignal?, logger: Logger) async {
        await withTaskGroup(of: Void.self) { workers in
            if settings.eventRetentionDays > 0 {
                workers.addTask { await EventRetention.run(store, days: settings.eventRetentionDays, logger: logger) }
            }
            if let wake {
                let delivery = WebhookDelivery(store: store, endpoints: settings.webhooks, policy: settings.webhookPolicy,
                                               metrics: metrics, logger: logger, wake: wake)
                workers.addTask { await delivery.run() }
            }
            if let consumptionWake, let api = settings.serverAPI {
                let consumption = ConsumptionDelivery(
                    store: store, client: AppStoreServerAPIClient(api, timeout: .seconds(StoreCatchUp.exchangeSeconds)),
                    policy: settings.consumptionPolicy, retry: settings.webhookPolicy.retry,
                    pollMilliseconds: settings.webhookPolicy.pollMilliseconds * 4, logger: logger, wake: consumptionWake)
                workers.addTask { await consumption.run() }
            }
        }
    }

    /// The address could not be listened on: a port in use or not ours, or a --host that is neither
    /// an address nor a name that resolves (999.1.1.1, a typo). Nil for any other error.
    private static func listenError(_ error: any Error, _ settings: ServerSettings) -> ListenError? {
        if let error = error as? IOError, [EADDRINUSE, EADDRNOTAVAIL, EACCES].contains(error.errnoCode) {
            return ListenError(host: settings.host, port: settings.port, reason: String(cString: strerror(error.errnoCode)))
        }
        guard error is SocketAddressError || error is SocketAddressError.UnknownHost else { return nil }
        return ListenError(host: settings.host, port: settings.port,
                           reason: "\(settings.host) is neither an IP address nor a host name that resolves")
    }

    /// What a server of `policy` claims its store for (StoreIdentity); nil without a bundle id or an environment.
    static func storeClaim(_ policy: VerificationPolicy) -> StoreIdentity.Claim? {
        guard let environment = policy.environment, let bundleID = policy.bundleID else { return nil }
        return StoreIdentity.Claim(environment: environment.signedName, bundleIDs: Set([bundleID] + policy.otherBundleIDs))
    }

    /// Asks OCSP again, every `ocspRefreshIntervalSeconds`, for every cached answer that
    /// expires within `ocspRefreshBeforeSeconds`, so that no request waits on OCSP in
    /// steady state. Ends when cancelled (shutdown).
    static func refreshRevocation(_ settings: ServerSettings, metrics: ServerMetrics, logger: Logger) async {
        let transport = RevocationTransport(timeout: .seconds(Int64(max(1, settings.ocspTimeoutSeconds))))
        let verifier = settings.verifier
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: .seconds(max(1, settings.ocspRefreshIntervalSeconds)))
            } catch {
                return
            }
            let due = verifier.revocationQueriesDue(withinSeconds: settings.ocspRefreshBeforeSeconds)
            guard !due.isEmpty else { continue }
            for (query, outcome) in zip(due, await transport.ask(due, for: verifier)) {
                metrics.recordRevocation(outcome: outcome.label, reason: "refresh")
                if case .accepted = outcome { continue }
                logger.warning("OCSP refresh for \(query.subject): \(outcome.label)")
            }
        }
    }

    /// The store could not be opened or migrated: named, for a usage error. The
    /// location holds no password (StoreLocation refuses one in a URL).
    public struct StoreOpenError: Error, CustomStringConvertible {
        public let location: StoreLocation
        public let reason: String
        public var description: String { "cannot open the store \(location): \(reason)" }
    }

    /// Every route, as `receipt serve --help` lists them: the fixed ones, then the two at configured paths.
    public static var routeSummaries: [String] {
        ServerRoute.fixed.map(\.summary) + ["POST --notifications-path", "POST --retention-path (with --retention-rules)"]
    }

    /// The server could not listen on its address (in use, not this host's, or a
    /// privileged port): named, for a usage error rather than a bare socket call.
    public struct ListenError: Error, CustomStringConvertible {
        public let host: String
        public let port: Int
        public let reason: String
        public var description: String { "cannot listen on \(host):\(port): \(reason)" }
    }

    /// Written once, by runConcurrencyOnEventLoops, before any task or thread exists to read it.
    nonisolated(unsafe) private static var concurrencyOnEventLoops = false

    /// Makes `workers` event-loop threads (NIO's singleton group) Swift's global executor
    /// too, so that a request's handler, and the verification in it, runs on the thread
    /// that read the request instead of hopping to the cooperative pool and back (more
    /// requests/s under load: docs/performance.md). NIO allows this once, from the main thread, before any
    /// task starts: `receipt serve` calls it first thing in main. Without it, `run` works
    /// the same with its own event loops.
    public static func runConcurrencyOnEventLoops(workers: Int) {
        NIOSingletons.groupLoopCountSuggestion = max(1, workers)
        concurrencyOnEventLoops = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
            || installEnqueueHook()
    }

    /// What NIO's installation does, for a runtime linked statically (as `make` links
    /// `receipt`), whose hook NIO cannot find: every job goes to an event loop of the
    /// singleton group, the current one when called on one (`any()` prefers it).
    private static func installEnqueueHook() -> Bool {
        typealias EnqueueGlobalHook = @convention(thin) (UnownedJob, @convention(thin) (UnownedJob) -> Void) -> Void
        let hook = concurrency_enqueue_global_hook()!
        guard hook.pointee == nil else { return false }  // someone else's executor: keep it
        let enqueueOnEventLoop: EnqueueGlobalHook = { job, _ in
            MultiThreadedEventLoopGroup.singleton.any().executor.enqueue(ExecutorJob(job))
        }
        hook.pointee = unsafeBitCast(enqueueOnEventLoop, to: UnsafeMutableRawPointer.self)
        return true
    }
}
