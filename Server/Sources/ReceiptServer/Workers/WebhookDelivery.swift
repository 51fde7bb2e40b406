import AsyncHTTPClient
import Logging
import NIOCore
import NIOHTTP1
import ReceiptCore
import ReceiptServerAPIClient
import Synchronization

/// One webhook endpoint: where events go and the secret they are signed with.
public struct WebhookEndpoint: Sendable {
    public let url: String
    public let secret: StandardWebhook.Secret

    /// Refuses a URL WebhookURL refuses.
    public init(url: String, secret: StandardWebhook.Secret) throws(ReceiptError) {
        self.url = try WebhookURL.checked(url)
        self.secret = secret
    }
}

/// How deliveries are paced: attempts, backoff and for how long an event is retried.
public struct WebhookPolicy: Sendable {
    /// When a failed attempt is tried again.
    public var retry = RetryPolicy()
    /// After this long since the event was made, a failing delivery is parked as failed
    /// (`receipt events replay` sends it again). Three days by default.
    public var retryPeriodMilliseconds: Int64 = 3 * 86_400_000
    /// One attempt, head and body of the answer, within this many seconds.
    public var timeoutSeconds: Int64 = 10
    /// Connecting, within the attempt's timeout: a receiver that refuses or drops
    /// connections costs this at most, not the whole timeout.
    public var connectTimeoutSeconds: Int64 = 3
    /// Deliveries sent at once to one endpoint by one server: each endpoint has slots of its
    /// own, so that a receiver that hangs holds up only its own events.
    public var concurrency = 16
    /// How long a claimed delivery is this server's: past it (the server died) another takes it.
    /// An attempt runs within the timeout and its outcome is stored just after; twice the
    /// timeout plus five seconds covers that with room, and a restarted server waits no
    /// longer than needed for what a killed one had claimed.
    var leaseMilliseconds: Int64 { 2 * timeoutSeconds * 1000 + 5_000 }
    /// How often the outbox is looked at when nothing woke the worker.
    public var pollMilliseconds: Int64 = 500

    public init() {}
}

/// Sends the outbox's events to the webhooks, signed as Standard Webhooks says: leases
/// due deliveries from the store (several servers share the work), posts each with
/// `webhook-id`, `webhook-timestamp` and `webhook-signature`, and records the outcome:
/// a 2xx delivers, whatever its body (of which at most `maxAnswerBytes` are read); a timeout,
/// a connection error, 5xx, 408 or 429 is tried again later (WebhookPolicy) until the retry
/// period ends; any other answer (a 3xx is not followed, a 4xx will not change) parks the
/// delivery as failed at once.
///
/// Each endpoint has a worker and `policy.concurrency` slots of its own: deliveries are
/// claimed for that endpoint alone, and a slot is filled again as soon as its attempt ends,
/// so that one hanging or refusing receiver never holds up another's events, and no batch
/// waits for its slowest attempt.
struct WebhookDelivery: Sendable {
    let store: any SubscriptionStore
    let endpoints: [WebhookEndpoint]
    let policy: WebhookPolicy
    let metrics: ServerMetrics
    let logger: Logger
    /// Woken when a change was recorded, so that an event leaves at once rather than at the next poll.
    let wake: WakeSignal
    let clock: ReceiptClock

    static let maxAnswerBytes = 64 << 10

    /// The client of every attempt: no redirect followed, connecting within the policy's connect timeout.
    private let client: HTTPClient

    init(store: any SubscriptionStore, endpoints: [WebhookEndpoint], policy: WebhookPolicy, metrics: ServerMetrics,
         logger: Logger, wake: WakeSignal, clock: ReceiptClock = .system) {
        (self.store, self.endpoints, self.policy, self.metrics, self.logger, self.wake) = (store, endpoints, policy, metrics, logger, wake)
        self.clock = clock
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow,
                                                     timeout: .init(connect: .seconds(policy.connectTimeoutSeconds)))
        // A refused connection ends its attempt at once (the delivery's own backoff tries again),
        // rather than being tried again by the client until the connect timeout; and each slot
        // of an endpoint may hold a connection.
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = max(1, policy.concurrency)
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Delivers until cancelled (shutdown). A store that fails is retried at the next poll.
    func run() async {
        await withTaskGroup(of: Void.self) { workers in
            for endpoint in endpoints {
                let listener = wake.listener()
                workers.addTask { await deliver(to: endpoint, wakingOn: listener) }
            }
            workers.addTask { await reportBacklog() }
        }
        try? await client.shutdown()
    }

    /// The outbox's backlog in the metrics, every second.
    private func reportBacklog() async {
        while !Task.isCancelled {
            do {
                let backlog = try await store.deliveryBacklog()
                metrics.recordWebhookBacklog(count: backlog.count, oldest: backlog.oldest, now: clock.now())
            } catch {
                logger.warning("webhook outbox: \(error)")
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }

    /// One endpoint's worker: fills its free slots with the deliveries due (one claim), and as
    /// attempts end stores their outcomes (those ended meanwhile in one transaction) and claims
    /// again; with nothing due, waits for a change or the next poll.
    private func deliver(to endpoint: WebhookEndpoint, wakingOn listener: WakeSignal) async {
        let (events, continuation) = AsyncStream<Void>.makeStream()
        let ended = EndedAttempts()
        // Ticks when woken or at each poll, so that the loop below looks for deliveries due.
        let ticker = Task {
            while !Task.isCancelled {
                await listener.wait(upTo: .milliseconds(policy.pollMilliseconds))
                continuation.yield()
            }
        }
        defer { ticker.cancel() }
        await withTaskGroup(of: Void.self) { attempts in
            var inFlight = 0
            var health = EndpointHealth()
            continuation.yield()
            for await _ in events {
                if Task.isCancelled { break }
                let finished = ended.taken()
                if !finished.isEmpty {
                    inFlight -= finished.count
                    do {
                        try await store.finish(finished)
                    } catch {
                        // The leases end by themselves: the deliveries are tried again (receivers de-duplicate on webhook-id).
                        logger.warning("webhook deliveries: their outcomes were not stored: \(error)")
                    }
                }
                let now = clock.now()
                for (_, outcome) in finished { health.record(outcome.result, at: now) }
                guard inFlight < policy.concurrency else { continue }
                let claimed: [ClaimedDelivery]
                do {
                    claimed = try await claim(for: endpoint, slots: policy.concurrency - inFlight, health: &health, at: now)
                } catch {
                    logger.warning("webhook outbox: \(error)")
                    continue
                }
                for delivery in claimed {
                    inFlight += 1
                    attempts.addTask {
                        let outcome = await attempt(delivery, to: endpoint)
                        ended.add(delivery, outcome)
                        continuation.yield()
                    }
                }
            }
            attempts.cancelAll()
        }
    }

    /// The deliveries due for `slots` free slots of `endpoint`. Down (EndpointHealth): first attempts
    /// (each finds out for its own event), and a retry only as the backoff's probe.
    private func claim(for endpoint: WebhookEndpoint, slots: Int, health: inout EndpointHealth, at now: Int64) async throws
        -> [ClaimedDelivery] {
        let lease = policy.leaseMilliseconds
        guard health.isDown else {
            return try await store.claimDeliveries(endpoints: [endpoint.url], limit: slots, leaseMilliseconds: lease, at: now)
        }
        var claimed: [ClaimedDelivery] = []
        if health.probeDue(at: now) {
            claimed = try await store.claimDeliveries(endpoints: [endpoint.url], limit: 1, leaseMilliseconds: lease, at: now)
            health.probed(at: now)
        }
        guard claimed.count < slots else { return claimed }
        return claimed + (try await store.claimDeliveries(endpoints: [endpoint.url], limit: slots - claimed.count,
                                                          leaseMilliseconds: lease, firstAttemptsOnly: true, at: now))
    }

    /// One attempt, counted and logged.
    private func attempt(_ delivery: ClaimedDelivery, to endpoint: WebhookEndpoint) async -> DeliveryOutcome {
        let outcome = await post(delivery, to: endpoint)
        metrics.recordWebhookDelivery(outcome: outcome.label, createdAt: delivery.createdAt)
        if case .failed = outcome.outcome.result {
            logger.error("webhook delivery \(delivery.eventID) to \(WebhookURL.shown(endpoint.url)) failed for good: \(outcome.outcome.detail)")
        }
        return outcome.outcome
    }

    /// One POST, and what it leaves: the outcome for the store and a metrics label.
    private func post(_ delivery: ClaimedDelivery, to endpoint: WebhookEndpoint) async -> (outcome: DeliveryOutcome, label: String) {
        let seconds = clock.now() / 1000
        var request = HTTPClientRequest(url: endpoint.url)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/json")
        request.headers.add(name: "user-agent", value: "libreceipt-serve/\(ReceiptVersion.string)")
        request.headers.add(name: "webhook-id", value: delivery.eventID)
        request.headers.add(name: "webhook-timestamp", value: String(seconds))
        do {
            request.headers.add(name: "webhook-signature", value: try StandardWebhook.signature(
                secret: endpoint.secret, id: delivery.eventID, timestamp: seconds, body: delivery.body))
        } catch {
            return (retry(delivery, "signing failed: \(error)"), "error")
        }
        request.body = .bytes(ByteBuffer(bytes: delivery.body))
        let answer: BoundedExchange.Answer
        do {
            answer = try await BoundedExchange.send(request, with: client, timeout: .seconds(policy.timeoutSeconds),
                                                    maxBytes: Self.maxAnswerBytes, beyondMaxBytes: .cut)
        } catch {
            let reason = BoundedExchange.reason(error)
            return (retry(delivery, reason), reason.hasPrefix("no whole answer") ? "timeout" : "connection_error")
        }
        let now = clock.now()
        switch answer.status {
        case 200..<300:
            return (DeliveryOutcome(result: .delivered(at: now), detail: "HTTP \(answer.status)"), DeliveryState.delivered.rawValue)
        case 408, 429, 500..<600:
            return (retry(delivery, "HTTP \(answer.status)"), "http_\(answer.status / 100)xx")
        default:
            return (DeliveryOutcome(result: .failed(at: now), detail: "HTTP \(answer.status): not retried (only timeouts, "
                                    + "connection errors, 408, 429 and 5xx are)"), "refused")
        }
    }

    /// Due again after the backoff, or parked as failed when that is past the retry period.
    private func retry(_ delivery: ClaimedDelivery, _ detail: String) -> DeliveryOutcome {
        let now = clock.now()
        let (end, overflow) = delivery.createdAt.addingReportingOverflow(policy.retryPeriodMilliseconds)
        guard let next = policy.retry.nextAttempt(after: delivery.attempt, at: now, until: overflow ? .max : end,
                                                  random: Double.random(in: 0..<1)) else {
            return DeliveryOutcome(result: .failed(at: now), detail: "\(detail); retried for \(policy.retryPeriodMilliseconds / 1000) s, "
                                   + "\(delivery.attempt) attempts")
        }
        return DeliveryOutcome(result: .retry(at: next), detail: detail)
    }
}

/// Whether an endpoint answers, from its attempts' outcomes: after `failuresToDown` retryable
/// failures in a row (refused, timed out, 5xx, 429) with no delivery between, it is down: its
/// deliveries' retries wait, but for one probe each backoff (1 s, doubling to `longestBackoff`),
/// so that a dead receiver costs neither the server's cores nor the receiver a storm of retries.
/// First attempts go on (each finds out for its own event). A delivery makes it up again.
struct EndpointHealth {
    static let failuresToDown = 3
    static let firstBackoff: Int64 = 1_000
    static let longestBackoff: Int64 = 15_000

    private var failuresInARow = 0
    private var backoff: Int64 = 0
    private var nextProbe: Int64 = 0

    var isDown: Bool { failuresInARow >= Self.failuresToDown }

    func probeDue(at now: Int64) -> Bool { now >= nextProbe }

    mutating func probed(at now: Int64) {
        backoff = backoff == 0 ? Self.firstBackoff : min(Self.longestBackoff, backoff * 2)
        nextProbe = now + backoff
    }

    mutating func record(_ result: DeliveryOutcome.Result, at now: Int64) {
        switch result {
        case .delivered:
            (failuresInARow, backoff, nextProbe) = (0, 0, 0)
        case .retry:
            failuresInARow += 1
            if failuresInARow == Self.failuresToDown { probed(at: now) }
        case .failed:
            break  // the receiver answered (a 4xx): it is up, and refuses this event
        }
    }
}

/// Attempts ended and not yet stored, handed from the attempts to their endpoint's worker.
private final class EndedAttempts: Sendable {
    private let list = Mutex<[(ClaimedDelivery, DeliveryOutcome)]>([])

    func add(_ delivery: ClaimedDelivery, _ outcome: DeliveryOutcome) { list.withLock { $0.append((delivery, outcome)) } }

    /// Every one added since the last call.
    func taken() -> [(ClaimedDelivery, DeliveryOutcome)] { list.withLock { list in defer { list = [] }; return list } }
}

/// Wakes a waiting worker early; a signal given while none waits is kept for the next wait.
/// Several workers each wait on a `listener()` of their own, woken with it.
actor WakeSignal {
    private var pending = false
    private var waiter: CheckedContinuation<Void, Never>?
    private nonisolated let listeners = Mutex<[WakeSignal]>([])

    nonisolated func signal() {
        Task { await self.fire() }
        for listener in listeners.withLock({ $0 }) { listener.signal() }
    }

    /// A signal of its own for one more waiter, woken whenever this one is signalled.
    nonisolated func listener() -> WakeSignal {
        let made = WakeSignal()
        listeners.withLock { $0.append(made) }
        return made
    }

    private func fire() {
        if let waiter {
            self.waiter = nil
            waiter.resume()
        } else {
            pending = true
        }
    }

    /// Returns when signalled, or after `timeout`.
    func wait(upTo timeout: Duration) async {
        if pending {
            pending = false
            return
        }
        waits &+= 1
        let wait = waits
        // A timer ends only its own wait: one that fired late, or was cancelled, must not end
        // the next (each would end the one after it, and the worker would never sleep).
        let timer = Task { [weak self] in
            do { try await Task.sleep(for: timeout) } catch { return }
            await self?.timedOut(wait)
        }
        await withCheckedContinuation { waiter = $0 }
        pending = false
        timer.cancel()
    }

    private var waits = 0

    private func timedOut(_ wait: Int) {
        guard wait == waits, let waiter else { return }
        self.waiter = nil
        waiter.resume()
    }
}
