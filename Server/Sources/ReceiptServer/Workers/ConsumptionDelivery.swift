import Logging
import ReceiptCore
import ReceiptServerAPIClient

/// Sends the answers to Apple's `CONSUMPTION_REQUEST`s with the App Store Server API
/// (Send Consumption Information, V2): fills requests the app has not answered from the
/// operator's policy (ConsumptionPolicy), then leases the answers due and sends them; an
/// answer Apple refuses for good is failed, one it could take later (no answer, 429, 5xx)
/// is sent again with backoff until Apple's 12 hours are over (then expired).
struct ConsumptionDelivery: Sendable {
    let store: any SubscriptionStore
    let client: AppStoreServerAPIClient
    let policy: ConsumptionPolicy?
    /// When an answer Apple could take later is sent again (the webhooks' policy).
    let retry: RetryPolicy
    /// How often the requests are looked at when nothing woke the worker.
    let pollMilliseconds: Int64
    let logger: Logger
    let wake: WakeSignal
    var clock = ReceiptClock.system

    /// Answers claimed at once; they are sent one after the other.
    static let batch = 8
    /// A claimed batch is this server's while its answers are sent one by one, each exchange
    /// within StoreCatchUp.exchangeSeconds, with five seconds to spare.
    static let leaseMilliseconds = Int64(batch) * StoreCatchUp.exchangeSeconds * 1000 + 5_000

    func run() async {
        while !Task.isCancelled {
            var claimed: [ConsumptionRow] = []
            do {
                if let policy { try await answerFromPolicy(policy) }
                claimed = try await store.withStatements(transaction: true) {
                    try await ConsumptionOutbox.claim(limit: Self.batch, leaseMilliseconds: Self.leaseMilliseconds, on: $0,
                                                      at: clock.now())
                }
            } catch {
                logger.warning("consumption answers: \(error)")
            }
            if claimed.isEmpty {
                await wake.wait(upTo: .milliseconds(pollMilliseconds))
                continue
            }
            for row in claimed { await send(row) }
        }
    }

    /// The policy's answer for each request still awaiting one that it covers.
    private func answerFromPolicy(_ policy: ConsumptionPolicy) async throws {
        let awaiting = try await store.withStatements(transaction: false) {
            try await ConsumptionOutbox.awaiting(limit: 64, on: $0, at: clock.now())
        }
        for row in awaiting {
            guard let arguments = policy.arguments(transactionID: row.transactionID, productID: row.productID) else { continue }
            let body = ConsumptionAnswer.bodyText(arguments)
            // Refused when the app answered meanwhile, or Apple's 12 hours passed: nothing to do.
            let now = clock.now()
            _ = try await store.withStatements(transaction: true) {
                try await ConsumptionOutbox.answer(transactionID: row.transactionID, body: body, source: "policy", on: $0, at: now)
            }
        }
    }

    private func send(_ row: ConsumptionRow) async {
        let now = clock.now()
        let (state, next, outcome): (DeliveryState, Int64, String)
        if now >= row.deadline {
            (state, next, outcome) = (.expired, now, "Apple's 12 hours passed before it took an answer")
        } else {
            do {
                let arguments = try ConsumptionAnswer.arguments(transactionID: row.transactionID, body: Array((row.body ?? "{}").utf8))
                _ = try await client.call(ConsumptionAnswer.call, arguments)
                (state, next, outcome) = (.sent, now, "accepted by the App Store")
            } catch let error as ServerAPIError where !error.failure.isRetryable {
                (state, next, outcome) = (.failed, now, error.failure.summary)
            } catch let error as ReceiptError where error.status != .cryptoFailure {
                (state, next, outcome) = (.failed, now, "\(error.status.name): \(error.detail)")
            } catch {
                // The claim counted this attempt: `attempts` is its number.
                if let again = retry.nextAttempt(after: Int(row.attempts), at: now, until: row.deadline - 1, random: Double.random(in: 0..<1)) {
                    (state, next, outcome) = (.pending, again, "\(error)")
                } else {
                    (state, next, outcome) = (.expired, now, "\(error); Apple's 12 hours end before another attempt")
                }
            }
        }
        do {
            try await store.withStatements(transaction: true) {
                try await ConsumptionOutbox.finish(transactionID: row.transactionID, state: state, next: next, outcome: outcome, on: $0)
            }
        } catch {
            logger.warning("consumption answer for \(row.transactionID): its outcome was not stored: \(error)")
        }
        if state == .failed || state == .expired {
            logger.error("consumption answer for transaction \(row.transactionID) \(state.rawValue): \(outcome)")
        }
    }
}
