import ReceiptCore

/// ServerSettings' rules. They read the route table (a configured path may be no route's), so they
/// sit with the process, above HTTP; the defaults are in Settings/ServerSettingsDefaults.swift.
extension ServerSettings {
    /// The most days an event may be kept.
    public static let maxEventRetentionDays = 36_500

    /// Refuses settings a server cannot run with, or would run with unsafely, naming the flag
    /// that sets each (the message `receipt serve` prints, and `--check-config`). The server
    /// validates its settings before it starts (ReceiptServer.run).
    public func validate() throws(ReceiptError) {
        guard maxBodyBytes > 0, workers > 0, maxConnections > 0, requestTimeoutSeconds > 0, (0...65535).contains(port),
              ocspTimeoutSeconds > 0, ocspRefreshIntervalSeconds > 0, ocspRefreshBeforeSeconds > 0 else {
            throw ReceiptError(.invalidArgument, "--port must be 0...65535, and --max-body, --workers, --max-connections, "
                               + "--request-timeout and the --ocsp-* options positive")
        }
        guard Self.isFree(notificationsPath) else {
            throw ReceiptError(.invalidArgument, "--notifications-path must start with /, hold no %-escape, and not be one of "
                               + ServerRoute.reservedPaths.joined(separator: ", ") + " or under "
                               + ServerRoute.reservedPrefixes.joined(separator: " or "))
        }
        if store != nil { try validateStorePolicy() }
        guard store == nil || !credentials.readTokens.isEmpty || credentials.openReads else {
            throw ReceiptError(.invalidArgument, "--store keeps customers' data: give read tokens with --read-token-file FILE "
                               + "or $RECEIPT_READ_TOKEN, or say --allow-unauthenticated-reads")
        }
        let callsPerLookUp = CatchUpLimiter.callsPerLookUp(sandboxFallback: serverAPISandboxFallback != nil)
        guard lookupCallsPerMinute >= callsPerLookUp else {
            throw ReceiptError(.invalidArgument, "--api-calls-per-minute must be at least \(callsPerLookUp) (one look-up)")
        }
        if serverAPISandboxFallback != nil {
            guard let serverAPI else {
                throw ReceiptError(.invalidArgument, "--api-sandbox-fallback needs App Store Server API credentials (--api-private-key-file)")
            }
            guard serverAPI.environment == .production else {
                throw ReceiptError(.invalidArgument, "--api-sandbox-fallback is for a production App Store Server API")
            }
        }
        if retention != nil {
            guard Self.isFree(retentionPath), retentionPath != notificationsPath else {
                throw ReceiptError(.invalidArgument, "--retention-path must start with /, hold no %-escape, and be no other endpoint's path")
            }
        }
        try validateWebhooks()
        if consumptionPolicy != nil, store == nil || serverAPI == nil {
            throw ReceiptError(.invalidArgument, "--consumption-policy answers through the App Store Server API: "
                               + "give --store and --api-private-key-file")
        }
    }

    /// A path no fixed route answers: where notifications or realtime requests may be posted.
    /// Requests' paths are routed with their escapes of unreserved characters decoded
    /// (ServerRoutes.route(for:)): a configured path holds none, so that it is matched as written.
    static func isFree(_ path: String) -> Bool {
        path.hasPrefix("/") && !path.contains("%") && !ServerRoute.reservedPaths.contains(path) && !ServerRoute.reservedPrefixes.contains(where: path.hasPrefix)
    }

    /// A store takes only its own app's data: the bundle id and the environment are
    /// required, and a production store needs the app's Apple id, so that Sandbox and
    /// TestFlight purchases never entitle production accounts.
    private func validateStorePolicy() throws(ReceiptError) {
        let policy = verifier.policy
        guard policy.bundleID != nil else {
            throw ReceiptError(.invalidArgument, "--store takes only its app's notifications: give --bundle-id")
        }
        guard let environment = policy.environment else {
            throw ReceiptError(.invalidArgument, "--store keeps one environment's purchases: give --environment "
                               + "(production, sandbox, ...), so that sandbox purchases never entitle production accounts")
        }
        guard environment != .production || policy.appAppleID != nil else {
            throw ReceiptError(.invalidArgument, "a production --store needs --app-apple-id (the app's Apple id, which "
                               + "production notifications name)")
        }
    }

    private func validateWebhooks() throws(ReceiptError) {
        guard (0...Self.maxEventRetentionDays).contains(eventRetentionDays) else {
            throw ReceiptError(.invalidArgument, "--event-retention-days is 0 (keep every event) to \(Self.maxEventRetentionDays)")
        }
        guard !webhooks.isEmpty else { return }
        guard store != nil else { throw ReceiptError(.invalidArgument, "--webhook delivers the store's events: give --store") }
        guard Set(webhooks.map(\.url)).count == webhooks.count else {
            throw ReceiptError(.invalidArgument, "a --webhook URL is given twice")
        }
        guard webhookPolicy.retryPeriodMilliseconds > 0, webhookPolicy.retry.initialBackoffMilliseconds > 0,
              webhookPolicy.timeoutSeconds > 0 else {
            throw ReceiptError(.invalidArgument, "--webhook-retry-period, --webhook-initial-backoff-ms and --webhook-timeout must be positive")
        }
    }
}
