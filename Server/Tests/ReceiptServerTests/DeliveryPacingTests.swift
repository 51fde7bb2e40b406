import ReceiptCore
import Testing
@testable import ReceiptServer

/// How deliveries are paced, on instants the test gives (the clock is an argument): each retry's
/// backoff (RetryPolicy, the queues' one), and an endpoint's health (down after three retryable failures, probed with backoff).
@Suite struct DeliveryPacingTests {
    static let now: Int64 = 1_800_000_000_000

    @Test func retriesDoubleWithJitterUpToTheLongest() {
        var policy = RetryPolicy()
        policy.initialBackoffMilliseconds = 1_000
        policy.maxBackoffMilliseconds = 8_000
        let now = Self.now
        // Jitter draws between half and all of the delay.
        #expect(policy.nextAttempt(after: 1, at: now, random: 0) == now + 500)
        #expect(policy.nextAttempt(after: 1, at: now, random: 0.999_999) == now + 999)
        #expect(policy.nextAttempt(after: 2, at: now, random: 0) == now + 1_000)
        #expect(policy.nextAttempt(after: 4, at: now, random: 0) == now + 4_000)
        #expect(policy.nextAttempt(after: 5, at: now, random: 0) == now + 4_000)  // 8 s at most
        #expect(policy.nextAttempt(after: Int.max, at: now, random: 0) == now + 4_000)  // no overflow
        #expect(policy.nextAttempt(after: 1, at: .max - 10, random: 0) == .max)  // nor at the end of time
    }

    @Test func aRetryPastItsDeadlineIsNone() {
        var policy = RetryPolicy()
        policy.initialBackoffMilliseconds = 1_000
        let now = Self.now
        #expect(policy.nextAttempt(after: 1, at: now, until: now + 500, random: 0) == now + 500)
        #expect(policy.nextAttempt(after: 1, at: now, until: now + 499, random: 0) == nil)
        #expect(policy.nextAttempt(after: 3, at: now, until: now + 1_999, random: 0) == nil)
    }

    /// The webhook policy's retries are the queue's RetryPolicy, with its defaults.
    @Test func theWebhookPolicyRetriesByTheQueuesPolicy() {
        let policy = WebhookPolicy()
        #expect(policy.retry.initialBackoffMilliseconds == 5_000 && policy.retry.maxBackoffMilliseconds == 3_600_000)
        #expect(policy.retry.nextAttempt(after: 1, at: Self.now, random: 0) == Self.now + 2_500)
    }

    @Test func anEndpointIsDownAfterThreeRetriesAndProbedWithBackoff() {
        var health = EndpointHealth()
        let now = Self.now
        health.record(.retry(at: now), at: now)
        health.record(.failed(at: now), at: now)  // a 4xx: the receiver answered; it counts neither way
        health.record(.retry(at: now), at: now)
        #expect(!health.isDown)
        health.record(.retry(at: now), at: now)
        #expect(health.isDown)
        #expect(!health.probeDue(at: now + 999))
        #expect(health.probeDue(at: now + 1_000))
        health.probed(at: now + 1_000)
        #expect(!health.probeDue(at: now + 2_999))
        #expect(health.probeDue(at: now + 3_000))
        var at = now + 3_000
        for _ in 0..<8 {  // 4, 8, 16 (15 at most), 15, …
            health.probed(at: at)
            at += EndpointHealth.longestBackoff
        }
        health.probed(at: at)
        #expect(!health.probeDue(at: at + EndpointHealth.longestBackoff - 1))
        #expect(health.probeDue(at: at + EndpointHealth.longestBackoff))
        health.record(.delivered(at: at), at: at)
        #expect(!health.isDown)
        #expect(health.probeDue(at: at))
    }
}
