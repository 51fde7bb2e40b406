#if canImport(Glibc)
import Glibc
#endif
import ReceiptCore

/// Everything `receipt serve` is started with. The verifier carries the trust
/// (pinned roots, --allow-xcode, --anchor) and the default policy (--bundle-id,
/// --environment, --app-apple-id).
public struct ServerSettings: Sendable {
    public var host = Defaults.host
    /// 0 lets the system choose; the port bound is printed on standard output.
    public var port = Defaults.port
    public var verifier: ReceiptVerifier
    /// The apps' shared secrets for /verifyReceipt (21004 when one is required and missing).
    public var sharedSecrets: [String] = []
    /// The largest request body read; past it /verifyReceipt answers 21002 and /v1/verify 413.
    public var maxBodyBytes = Defaults.maxBodyBytes
    /// Event-loop threads. The verification runs on them when `receipt serve` has made them
    /// Swift's global executor (ReceiptServer.runConcurrencyOnEventLoops), else on Swift's pool.
    public var workers = ServerSettings.coreCount
    /// Connections served at once; the listener stops accepting past it.
    public var maxConnections = Defaults.maxConnections
    /// A whole request (head and body) must arrive within this many seconds of the
    /// connection opening or of the previous response; otherwise the connection is
    /// closed. This is the header, body and keep-alive idle timeout in one.
    public var requestTimeoutSeconds = Defaults.requestTimeoutSeconds
    /// With revocation on (the verifier's policy): seconds to wait for an OCSP answer,
    /// how often to look for answers about to expire, and how long before expiry to ask again.
    public var ocspTimeoutSeconds = Defaults.ocspTimeoutSeconds
    public var ocspRefreshIntervalSeconds = Defaults.ocspRefreshIntervalSeconds
    public var ocspRefreshBeforeSeconds = Int64(Defaults.ocspRefreshBeforeSeconds)
    /// Where what notifications told is kept: an SQLite file (created if absent) or a
    /// postgres:// URL; nil: no store, and the endpoints that need one answer 503 saying so.
    public var store: StoreLocation?
    /// App Store Server API credentials and host, with the server's verifier: subscriptions
    /// no notification told of are looked up there. Nil: they are not.
    public var serverAPI: ServerAPIClient?
    /// Opt-in, for a production `serverAPI`: the sandbox client a look-up asks when
    /// production does not know the transaction (App Review buys in the sandbox against
    /// production servers). Its verifier must require the sandbox. What it answers is
    /// stored beside production's rows, each JWS saying `"environment": "Sandbox"`.
    public var serverAPISandboxFallback: ServerAPIClient?
    /// Seconds the store has to open and migrate at start.
    public var storeTimeoutSeconds = Defaults.storeTimeoutSeconds
    /// Seconds one store operation may take while serving; then the request gets 503
    /// (21005 on /verifyReceipt) rather than waiting on a database that has gone away.
    public var storeOperationTimeoutSeconds = Defaults.storeOperationTimeoutSeconds
    /// Retention Messaging's realtime endpoint (the rules and the offer key); nil: not served.
    public var retention: RetentionEndpoint?
    /// Where Apple posts realtime requests (the realtime URL set with `receipt api configure_realtime_url`).
    public var retentionPath = Defaults.retentionPath
    /// Where App Store Server Notifications V2 are posted (the URL set in App Store Connect).
    public var notificationsPath = Defaults.notificationsPath
    /// The tokens of reads, writes and /metrics (ServerCredentials). None by default: the store closed to all.
    public var credentials = ServerCredentials.none
    /// A line per request at info (method, path without its query, status, milliseconds); off by default.
    public var accessLog = false
    /// Where the store's events are delivered (--webhook, each with its secret), and how.
    /// With at least one, the server makes the store's endpoints exactly these at start.
    public var webhooks: [WebhookEndpoint] = []
    public var webhookPolicy = Defaults.webhookPolicy
    /// How long an event is kept once no delivery waits on it (--event-retention-days): the
    /// server deletes older ones at start and every hour. Zero keeps every event.
    public var eventRetentionDays = Defaults.eventRetentionDays
    /// Answers to Apple's CONSUMPTION_REQUEST for requests the app does not answer (--consumption-policy).
    public var consumptionPolicy: ConsumptionPolicy?
    /// App Store Server API calls catch-up may make in any minute (each look-up is at least two).
    public var lookupCallsPerMinute = Defaults.lookupCallsPerMinute

    public init(verifier: ReceiptVerifier) {
        self.verifier = verifier
    }
}

extension ServerSettings {
    /// The number of cores online (Processors).
    public static var coreCount: Int { Processors.online }
}
