import Metrics
import Prometheus
import ReceiptCore
import Synchronization

/// The server's metrics, through swift-metrics into a Prometheus registry that
/// `GET /metrics` prints: requests by endpoint and status, a latency histogram by
/// endpoint, and the verifier's chain-cache hits and misses.
final class ServerMetrics: Sendable {
    static let requests = "receipt_requests_total"
    static let duration = "receipt_request_duration_seconds"

    private let registry = PrometheusCollectorRegistry()
    private let cacheHits: Prometheus.Counter
    private let cacheMisses: Prometheus.Counter
    private let revocationHits: Prometheus.Counter
    private let revocationMisses: Prometheus.Counter
    /// The cache statistics already added to the counters above (chains, then revocation).
    private let reported = Mutex((hits: 0, misses: 0, revocationHits: 0, revocationMisses: 0))
    static let revocationAnswers = "receipt_revocation_answers_total"
    static let notifications = "receipt_notifications_total"
    static let storeDuration = "receipt_store_duration_seconds"
    static let quickReads = "receipt_store_quick_reads_total"
    static let catchUps = "receipt_catch_up_total"
    static let credentialFailures = "receipt_credential_failures_total"
    static let webhookDeliveries = "receipt_webhook_deliveries_total"
    static let webhookQueueDepth = "receipt_webhook_queue_depth"
    static let webhookOldestPending = "receipt_webhook_oldest_pending_age_seconds"

    /// Bootstraps swift-metrics, which a process may do once: one ServerMetrics per process.
    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        // A verification takes tens of microseconds: the default buckets start at 5 ms.
        factory.durationHistogramBuckets[Self.duration] = [
            .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1),
            .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(50), .milliseconds(250), .seconds(1),
        ]
        factory.durationHistogramBuckets[Self.storeDuration] = [
            .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1),
            .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(50), .milliseconds(250), .seconds(1),
        ]
        // An event reaches its webhook in milliseconds, or after retries in hours.
        factory.durationHistogramBuckets[Self.webhookLatency] = [
            .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
            .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5), .seconds(60), .seconds(600), .seconds(3600),
        ]
        MetricsSystem.bootstrap(factory)
        cacheHits = Self.counter(in: registry, "verifier_cache_hits",
                                 "Verifications that found their certificate chain already validated")
        cacheMisses = Self.counter(in: registry, "verifier_cache_misses", "Verifications that validated their certificate chain")
        revocationHits = Self.counter(in: registry, "revocation_cache_hits",
                                      "Revocation steps that found a fresh OCSP answer cached (per certificate)")
        revocationMisses = Self.counter(in: registry, "revocation_cache_misses",
                                        "Revocation steps that found no fresh OCSP answer (per certificate)")
        registry.makeGauge(name: "receipt_build_info", labels: [("version", ServerBuild.version), ("commit", ServerBuild.commit)],
                           help: "Always 1; its labels name the version and the commit this server was built from").set(to: 1.0)
    }

    /// receipt_NAME_total, a counter the exposition brings up to date from the core's statistics.
    private static func counter(in registry: PrometheusCollectorRegistry, _ name: String, _ help: String) -> Prometheus.Counter {
        registry.makeCounter(descriptor: MetricNameDescriptor(namespace: "receipt", metricName: name, unitName: "total",
                                                              helpText: help))
    }

    /// One OCSP question asked, by what came of it (good, revoked, unknown, bad_answer,
    /// no_answer) and why it was asked (request, refresh).
    func recordRevocation(outcome: String, reason: String) {
        Metrics.Counter(label: Self.revocationAnswers, dimensions: [("outcome", outcome), ("reason", reason)]).increment()
    }

    /// One notification received, by its type (Apple's, from a verified notification;
    /// "unverified" for one refused) and what came of it: stored, duplicate, refused, store_error.
    func recordNotification(type: String, outcome: String) {
        Metrics.Counter(label: Self.notifications, dimensions: [("type", Self.boundedLabel(type)), ("outcome", outcome)]).increment()
    }

    /// One look-up of an unknown subscription with the App Store Server API, by outcome
    /// (stored, unknown, busy, failed).
    func recordCatchUp(outcome: String) {
        Metrics.Counter(label: Self.catchUps, dimensions: [("outcome", outcome)]).increment()
    }

    /// One request with a wrong token (refused, counted by ClientThrottle), or from an address
    /// refused for sending too many (throttled).
    func recordCredentialFailure(outcome: String) {
        Metrics.Counter(label: Self.credentialFailures, dimensions: [("outcome", outcome)]).increment()
    }

    static let webhookLatency = "receipt_webhook_delivery_latency_seconds"

    /// One webhook attempt by outcome (delivered, timeout, connection_error, http_4xx, http_5xx,
    /// refused, error) and, when delivered, the time from the event's making to its delivery.
    func recordWebhookDelivery(outcome: String, createdAt: Int64) {
        Metrics.Counter(label: Self.webhookDeliveries, dimensions: [("outcome", outcome)]).increment()
        guard outcome == DeliveryState.delivered.rawValue else { return }
        let elapsed = max(0, ReceiptClock.systemNow() - createdAt)
        Metrics.Timer(label: Self.webhookLatency).recordNanoseconds(elapsed * 1_000_000)
    }

    /// The outbox's deliveries still pending and the age of the oldest (0 when none).
    func recordWebhookBacklog(count: Int64, oldest: Int64?, now: Int64) {
        Metrics.Gauge(label: Self.webhookQueueDepth).record(count)
        Metrics.Gauge(label: Self.webhookOldestPending).record(Double(oldest.map { max(0, now - $0) } ?? 0) / 1000)
    }

    /// One store operation's time (record_notification, read_subscription, read_entitlements, read_known),
    /// by a timer made once per operation (a small fixed set), as the request handles are.
    func recordStore(operation: String, since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        let timer = storeTimers.withLock { timers in
            if let made = timers[operation] { return made }
            let made = Metrics.Timer(label: Self.storeDuration, dimensions: [("operation", operation)])
            timers[operation] = made
            return made
        }
        timer.recordInterval(elapsed)
    }

    private let storeTimers = Mutex<[String: Metrics.Timer]>([:])

    /// Apple's notification types are upper-case words joined by '_'; anything else is
    /// one label, so that no input grows the metrics without bound.
    static func boundedLabel(_ type: String) -> String {
        type.utf8.count <= 40 && type.utf8.allSatisfy({ (65...90).contains($0) || $0 == 95 }) && !type.isEmpty ? type : "other"
    }

    /// Handles made once per endpoint and status (both from small fixed sets): making
    /// one per request would look it up in the registry every time.
    private let handles = Mutex<[String: (requests: Metrics.Counter, duration: Metrics.Timer)]>([:])

    func record(endpoint: String, status: String, since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        let key = endpoint + " " + status
        let (requests, duration) = handles.withLock { handles in
            if let made = handles[key] { return made }
            let made = (Metrics.Counter(label: Self.requests, dimensions: [("endpoint", endpoint), ("status", status)]),
                        Metrics.Timer(label: Self.duration, dimensions: [("endpoint", endpoint)]))
            handles[key] = made
            return made
        }
        requests.increment()
        duration.recordInterval(elapsed)
    }

    /// The Prometheus text exposition, with the cache counters brought up to date.
    func exposition(cache: (hits: Int, misses: Int), revocation: (hits: Int, misses: Int)) -> [UInt8] {
        reported.withLock { last in
            Self.advance(cacheHits, from: &last.hits, to: cache.hits)
            Self.advance(cacheMisses, from: &last.misses, to: cache.misses)
            Self.advance(revocationHits, from: &last.revocationHits, to: revocation.hits)
            Self.advance(revocationMisses, from: &last.revocationMisses, to: revocation.misses)
        }
        return Self.withHelp(registry.emitToBuffer())
    }

    /// What each metric made through swift-metrics counts, for its `# HELP` line (swift-metrics
    /// carries no help text, and the registry refuses a family registered again with other help).
    static let help: [String: String] = [
        requests: "Requests answered, by endpoint (the route's path; a prefix route's without its trailing slash; \"other\" for none) and status (HTTP's, or Apple's in verifyReceipt's protocol)",
        duration: "Time from a request's head to its answer, by endpoint",
        revocationAnswers: "OCSP questions asked, by outcome (good, revoked, unknown, bad_answer, no_answer) and reason (request, refresh)",
        notifications: "App Store Server Notifications received, by type (Apple's; unverified for one refused) and outcome (stored, duplicate, refused, store_error)",
        storeDuration: "Time of one store operation, by operation",
        quickReads: "Point reads of the SQLite store, by outcome: read at once on the caller's thread, or handed_on to the store's readers",
        catchUps: "Unknown subscriptions looked up with the App Store Server API, by outcome (stored, unknown, busy, failed)",
        credentialFailures: "Requests refused for a wrong token (refused), or from an address refused for sending too many (throttled)",
        webhookDeliveries: "Webhook attempts, by outcome (delivered, timeout, connection_error, http_4xx, http_5xx, refused, error)",
        webhookLatency: "Time from an event's making to its delivery to a webhook",
        webhookQueueDepth: "Webhook deliveries still pending",
        webhookOldestPending: "Age of the oldest webhook delivery still pending (0 when none)",
    ]

    /// The exposition with a `# HELP` line before each family's `# TYPE` line that has none.
    static func withHelp(_ exposition: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(exposition.count + 4096)
        var previous: ArraySlice<UInt8> = []
        for line in exposition.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            if line.starts(with: "# TYPE ".utf8), !previous.starts(with: "# HELP ".utf8) {
                let name = String(decoding: line.dropFirst(7).prefix { $0 != UInt8(ascii: " ") }, as: UTF8.self)
                if let text = help[name] { out.append(contentsOf: "# HELP \(name) \(text)\n".utf8) }
            }
            out.append(contentsOf: line)
            out.append(UInt8(ascii: "\n"))
            previous = line
        }
        out.removeLast()  // the split's last piece had no newline after it
        return out
    }

    private static func advance(_ counter: Prometheus.Counter, from reported: inout Int, to now: Int) {
        if now > reported { counter.increment(by: Int64(now - reported)) }
        reported = max(reported, now)
    }
}

extension Metrics.Timer {
    func recordInterval(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
