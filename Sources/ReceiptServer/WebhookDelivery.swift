import AsyncHTTPClient
import Logging
import NIOCore
import NIOHTTP1
import ReceiptCore
import ReceiptServerAPIClient

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
    /// The first retry's delay; each next one doubles, up to `maxBackoffMilliseconds`,
    /// each drawn at random between half and all of it (jitter), so that receivers
    /// coming back are not hit by every server at once.
    public var initialBackoffMilliseconds: Int64 = 5_000
    public var maxBackoffMilliseconds: Int64 = 3_600_000
    /// After this long since the event was made, a failing delivery is parked as failed
    /// (`receipt events replay` sends it again). Three days by default.
    public var retryPeriodMilliseconds: Int64 = 3 * 86_400_000
    /// One attempt, head and body of the answer, within this many seconds.
    public var timeoutSeconds: Int64 = 10
    /// Deliveries sent at once by one server.
    public var concurrency = 16
    /// How long a claimed delivery is this server's: past it (the server died) another takes it.
    /// A batch's attempts run at once, each within the timeout, and their outcomes are stored
    /// just after; twice the timeout plus five seconds covers that with room, and a restarted
    /// server waits no longer than needed for what a killed one had claimed.
    var leaseMilliseconds: Int64 { 2 * timeoutSeconds * 1000 + 5_000 }
    /// How often the outbox is looked at when nothing woke the worker.
    public var pollMilliseconds: Int64 = 500

    public init() {}

    /// When to try again after attempt `attempt` (1 for the first) failed, with `random` in 0..<1.
    func nextAttempt(after attempt: Int, at now: Int64, random: Double) -> Int64 {
        let doubled = initialBackoffMilliseconds.multipliedReportingOverflow(by: Int64(1) << Int64(min(attempt - 1, 40)))
        let delay = doubled.overflow ? maxBackoffMilliseconds : min(doubled.partialValue, maxBackoffMilliseconds)
        return now + Int64(Double(delay) * (0.5 + random / 2))
    }
}

/// Sends the outbox's events to the webhooks, signed as Standard Webhooks says: leases
/// due deliveries from the store (several servers share the work), posts each with
/// `webhook-id`, `webhook-timestamp` and `webhook-signature`, and records the outcome:
/// a 2xx delivers; a timeout, a connection error, 5xx, 408 or 429 is tried again later
/// (WebhookPolicy) until the retry period ends; any other answer (a 3xx is not followed,
/// a 4xx will not change) parks the delivery as failed at once.
struct WebhookDelivery: Sendable {
    let store: any SubscriptionStore
    let endpoints: [WebhookEndpoint]
    let policy: WebhookPolicy
    let metrics: ServerMetrics
    let logger: Logger
    /// Woken when a change was recorded, so that an event leaves at once rather than at the next poll.
    let wake: WakeSignal

    static let maxAnswerBytes = 64 << 10

    /// Delivers until cancelled (shutdown). A store that fails is retried at the next poll.
    func run() async {
        let urls = endpoints.map(\.url)
        var lastBacklog = ContinuousClock.now - .seconds(10)
        while !Task.isCancelled {
            var claimed: [ClaimedDelivery] = []
            do {
                claimed = try await store.claimDeliveries(endpoints: urls, limit: policy.concurrency,
                                                          leaseMilliseconds: policy.leaseMilliseconds)
                if ContinuousClock.now - lastBacklog > .seconds(1) {
                    lastBacklog = ContinuousClock.now
                    let backlog = try await store.deliveryBacklog()
                    metrics.recordWebhookBacklog(count: backlog.count, oldest: backlog.oldest,
                                                 now: ReceiptVerifier.currentMilliseconds())
                }
            } catch {
                logger.warning("webhook outbox: \(error)")
            }
            if claimed.isEmpty {
                await wake.wait(upTo: .milliseconds(policy.pollMilliseconds))
                continue
            }
            // The batch's attempts at once; their outcomes stored together, in one transaction.
            let outcomes = await withTaskGroup(of: (ClaimedDelivery, DeliveryOutcome)?.self) { group in
                for delivery in claimed { group.addTask { await deliver(delivery) } }
                var outcomes: [(ClaimedDelivery, DeliveryOutcome)] = []
                for await outcome in group { if let outcome { outcomes.append(outcome) } }
                return outcomes
            }
            do {
                try await store.finish(outcomes)
            } catch {
                // The leases end by themselves: the deliveries are tried again (receivers de-duplicate on webhook-id).
                logger.warning("webhook deliveries: their outcomes were not stored: \(error)")
            }
        }
    }

    private func deliver(_ delivery: ClaimedDelivery) async -> (ClaimedDelivery, DeliveryOutcome)? {
        guard let endpoint = endpoints.first(where: { $0.url == delivery.endpoint }) else { return nil }
        let outcome = await attempt(delivery, to: endpoint)
        metrics.recordWebhookDelivery(outcome: outcome.label, createdAt: delivery.createdAt)
        if case .failed = outcome.outcome.result {
            logger.error("webhook delivery \(delivery.eventID) to \(WebhookURL.shown(endpoint.url)) failed for good: \(outcome.outcome.detail)")
        }
        return (delivery, outcome.outcome)
    }

    /// One POST, and what it leaves: the outcome for the store and a metrics label.
    private func attempt(_ delivery: ClaimedDelivery, to endpoint: WebhookEndpoint) async -> (outcome: DeliveryOutcome, label: String) {
        let seconds = ReceiptVerifier.currentMilliseconds() / 1000
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
            answer = try await BoundedExchange.send(request, with: BoundedExchange.noRedirects,
                                                    timeout: .seconds(policy.timeoutSeconds), maxBytes: Self.maxAnswerBytes)
        } catch {
            let reason = BoundedExchange.reason(error)
            return (retry(delivery, reason), reason.hasPrefix("no whole answer") ? "timeout" : "connection_error")
        }
        let now = ReceiptVerifier.currentMilliseconds()
        switch answer.status {
        case 200..<300:
            return (DeliveryOutcome(result: .delivered(at: now), detail: "HTTP \(answer.status)"), "delivered")
        case 408, 429, 500..<600:
            return (retry(delivery, "HTTP \(answer.status)"), "http_\(answer.status / 100)xx")
        default:
            return (DeliveryOutcome(result: .failed(at: now), detail: "HTTP \(answer.status): not retried (only timeouts, "
                                    + "connection errors, 408, 429 and 5xx are)"), "refused")
        }
    }

    /// Due again after the backoff, or parked as failed when that is past the retry period.
    private func retry(_ delivery: ClaimedDelivery, _ detail: String) -> DeliveryOutcome {
        let now = ReceiptVerifier.currentMilliseconds()
        let next = policy.nextAttempt(after: delivery.attempt, at: now, random: Double.random(in: 0..<1))
        guard next <= delivery.createdAt + policy.retryPeriodMilliseconds else {
            return DeliveryOutcome(result: .failed(at: now), detail: "\(detail); retried for \(policy.retryPeriodMilliseconds / 1000) s, "
                                   + "\(delivery.attempt) attempts")
        }
        return DeliveryOutcome(result: .retry(at: next), detail: detail)
    }
}

/// Wakes a waiting worker early; a signal given while none waits is kept for the next wait.
actor WakeSignal {
    private var pending = false
    private var waiter: CheckedContinuation<Void, Never>?

    nonisolated func signal() { Task { await self.fire() } }

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
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            await self?.fire()
        }
        await withCheckedContinuation { waiter = $0 }
        pending = false
        timer.cancel()
    }
}
