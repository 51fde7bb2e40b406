import HTTPTypes
import Hummingbird
import Logging
import ReceiptCore
import ReceiptServerAPIClient

/// The endpoints that need the store: notifications in, subscription state and
/// entitlements out, and what verifyReceipt merges. What a notification is and what
/// stored payloads mean now are the core's (NotificationEndpoint, SubscriptionState,
/// Entitlements, VerifyReceiptEndpoint); this moves rows between them and the store.
struct StoreResponder: Sendable {
    let store: DeadlineStore
    /// The store's point reads, answered now when they can be.
    let reads: StorePointReads
    let notifications: NotificationEndpoint
    let metrics: ServerMetrics
    /// Nil without App Store Server API credentials: unknown subscriptions stay unknown.
    let catchUp: StoreCatchUp?
    /// Asks OCSP when revocation is on and a notification's chain has no fresh answer.
    let revocation: RevocationTransport
    /// Wakes the webhook worker when a change was stored; nil without webhooks.
    let wake: WakeSignal?
    /// Wakes the consumption worker when an answer was given; nil without App Store Server API credentials.
    let consumptionWake: WakeSignal?
    /// Refused notifications are logged at the default level, this many a minute at most.
    let refusalLog = RateLimitedLog(perMinute: 20)

    typealias Reply<Answer: Sendable> = NowOrLater<Answer>

    /// 200 only once the notification and what it carries are stored (or were before:
    /// a redelivery). A notification that does not verify: 400, nothing stored (Apple
    /// sends it again a few times). One whose check could not be made yet (revocation
    /// unknown in hard mode) or the store failing: 503, so that Apple sends it again.
    func receive(body: [UInt8], logger: Logger) async -> (HTTPResponse.Status, [UInt8]) {
        var reading = notifications.read(body: body)
        // Revocation on and no fresh OCSP answer cached: ask now, then read again.
        if let payload = reading.revocationPending,
           await revocation.askedAnew(about: payload, for: notifications.verifier, metrics: metrics, reason: "notification") {
            reading = notifications.read(body: body)
        }
        let notification: ReceivedNotification
        switch reading.notification {
        case .failure(let error):
            // What can succeed later (no OCSP answer yet in hard mode) gets a 5xx, so
            // that Apple sends it again; what never can (a bad signature, another app), 400.
            let transient = error.canSucceedLater
            metrics.recordNotification(type: "unverified", outcome: transient ? "deferred" : "refused")
            if refusalLog.allow() {  // anyone can post: at most refusalLog's lines a minute
                logger.warning("notification \(transient ? "deferred (503)" : "refused (400)"): \(error.status.name): \(error.detail)")
            }
            return transient ? (.serviceUnavailable, Self.refusal(error)) : (.badRequest, Self.refusal(error))
        case .success(let read):
            notification = read
        }
        do {
            let start = ContinuousClock.now
            let stored = try await store.record(notification)
            metrics.recordStore(operation: "record_notification", since: start)
            metrics.recordNotification(type: notification.notificationType, outcome: stored ? "stored" : "duplicate")
            if stored {
                wake?.signal()
                if notification.notificationType == ConsumptionOutbox.requestType { consumptionWake?.signal() }
            }
            return (.ok, NotificationEndpoint.acknowledgement(notification, stored: stored))
        } catch let refused as StoreRowRefused {
            metrics.recordNotification(type: notification.notificationType, outcome: "refused")
            if refusalLog.allow() {
                logger.warning("notification \(notification.notificationUUID) refused (400): the store cannot hold it: \(refused)")
            }
            return (.badRequest, ServerAnswer.failure("STORE_REFUSED", "the store cannot hold a value of this "
                                                              + "notification (too long to index, text it cannot keep, or a date past 2^53 ms from 1970)"))
        } catch {
            metrics.recordNotification(type: notification.notificationType, outcome: "store_error")
            logger.error("notification \(notification.notificationUUID) not stored: \(error)")
            return (.serviceUnavailable, ServerAnswer.failure("STORE_UNAVAILABLE", "the store failed; send again"))
        }
    }

    /// `GET /v1/subscriptions/{originalTransactionId}`: 200 with the state. One no
    /// notification told of is looked up with the App Store Server API when the server
    /// has credentials and the caller may spend them (`mayLookUp`: it gave a read
    /// token): 404 when Apple does not know it either, 503 when too many look-ups run
    /// or the minute's budget is spent, 502 when Apple's answer failed. Otherwise: 404, saying so.
    func subscription(_ originalTransactionID: String, mayLookUp: Bool, logger: Logger) throws -> Reply<(HTTPResponse.Status, [UInt8])> {
        let start = ContinuousClock.now
        let each = StoreSchema.stateTransactionsPerSubscription
        // A switch rather than a closure over the answer: the answer at once allocates nothing more.
        switch try reads.subscriptions([originalTransactionID], transactionsEach: each) {
        case .now(let found):
            return subscription(originalTransactionID, in: found, since: start, mayLookUp: mayLookUp, logger: logger)
        case .later(let read):
            return .later {
                try await subscription(originalTransactionID, in: try await read(), since: start, mayLookUp: mayLookUp, logger: logger).answer()
            }
        }
    }

    /// `subscription`'s reply once the store's rows of it are read.
    private func subscription(_ originalTransactionID: String, in found: StoredSubscriptions, since start: ContinuousClock.Instant,
                              mayLookUp: Bool, logger: Logger) -> Reply<(HTTPResponse.Status, [UInt8])> {
        if let state = state(of: originalTransactionID, in: found, since: start) { return .now((.ok, SubscriptionStateJSON.render(state))) }
        if let refusal = oneTimePurchase(originalTransactionID, in: found) { return .now(refusal) }
        guard mayLookUp, let catchUp else { return .now(notLookedUp(originalTransactionID, mayLookUp: mayLookUp)) }
        return .later { try await lookUp(originalTransactionID, with: catchUp, logger: logger) }
    }

    /// The 404 for an original transaction id the store holds as a purchase that is no
    /// auto-renewable subscription (SubscriptionState.oneTimeType): it has no status to
    /// answer, and the App Store would not give one either.
    private func oneTimePurchase(_ originalTransactionID: String, in found: StoredSubscriptions) -> (HTTPResponse.Status, [UInt8])? {
        let transactions = Self.decoded(found.transactions)
        guard SubscriptionState.oneTimeType(of: transactions) != nil else { return nil }
        return (.notFound, Self.refusal(SubscriptionState.absence(of: originalTransactionID, in: transactions)))
    }

    /// The 404 for a subscription the store does not know and that is not looked up: the
    /// caller gave no read token (`mayLookUp` false), or the server has no App Store Server
    /// API credentials.
    private func notLookedUp(_ originalTransactionID: String, mayLookUp: Bool) -> (HTTPResponse.Status, [UInt8]) {
        let why = mayLookUp ? "is known, and without App Store Server API credentials (--api-private-key-file) it cannot be looked up"
                            : "is known; only a caller with a read token makes the server look it up"
        return (.notFound, Self.refusal(ReceiptError(.absent, "no transaction of original transaction id \(originalTransactionID) " + why)))
    }

    /// A subscription the store does not know, asked of the App Store Server API.
    private func lookUp(_ originalTransactionID: String, with catchUp: StoreCatchUp, logger: Logger) async throws
        -> (HTTPResponse.Status, [UInt8]) {
        let outcome: StoreCatchUp.Outcome
        do {
            outcome = try await catchUp.fetch(originalTransactionID: originalTransactionID)
        } catch {
            // The reason (which may name the API's host, or a transport's internals) goes to the log, not the caller.
            metrics.recordCatchUp(outcome: "failed")
            logger.error("App Store Server API look-up of \(originalTransactionID) failed: \(error)")
            return (.badGateway, ServerAnswer.failure("LOOKUP_FAILED", "the App Store Server API look-up failed; "
                                                              + "the server's log says why"))
        }
        switch outcome {
        case .busy:
            metrics.recordCatchUp(outcome: "busy")
            return (.serviceUnavailable, ServerAnswer.failure("LOOKUP_BUSY", "too many App Store Server API look-ups at once, "
                                                                      + "or this minute's budget of calls is spent; ask again"))
        case .unknown:
            metrics.recordCatchUp(outcome: "unknown")
            return (.notFound, Self.refusal(ReceiptError(.absent, "neither the store nor the App Store knows original transaction id \(originalTransactionID)")))
        case .stored:
            metrics.recordCatchUp(outcome: "stored")
            let start = ContinuousClock.now
            let found = try await reads.subscriptions([originalTransactionID], transactionsEach: StoreSchema.stateTransactionsPerSubscription).answer()
            guard let state = state(of: originalTransactionID, in: found, since: start) else {
                if let refusal = oneTimePurchase(originalTransactionID, in: found) { return refusal }
                return (.notFound, Self.refusal(ReceiptError(.absent, "the App Store's answer holds no transaction of original transaction id \(originalTransactionID)")))
            }
            return (.ok, SubscriptionStateJSON.render(state))
        }
    }

    private func state(of originalTransactionID: String, in found: StoredSubscriptions, since start: ContinuousClock.Instant)
        -> SubscriptionState? {
        metrics.recordStore(operation: "read_subscription", since: start)
        return SubscriptionState(originalTransactionID: originalTransactionID, transactions: Self.decoded(found.transactions),
                                 renewalInfo: Self.decoded(found.renewalInfos).first, at: ReceiptClock.systemNow())
    }

    /// `GET /v1/entitlements?appAccountToken=…[&limit=N][&cursor=C]`: what a page of the
    /// account's stored transactions (at most `limit`, most recently signed first)
    /// entitles it to now (the entitlements engine, as `receipt entitlements`), and the
    /// cursor of the next page (`next_cursor`) when there is one.
    func entitlements(appAccountToken: String, cursor: StoreCursor?, limit: Int) async throws -> (HTTPResponse.Status, [UInt8]) {
        let start = ContinuousClock.now
        let page = try await reads.transactions(appAccountToken: appAccountToken, after: cursor, limit: limit).answer()
        let transactions = Self.decoded(page.transactions)
        let subscriptionIDs = Array(Set(transactions.compactMap(\.originalTransactionID))).sorted()
        let renewals = Self.decoded(try await reads.subscriptions(subscriptionIDs, transactionsEach: 0).answer().renewalInfos)
        metrics.recordStore(operation: "read_entitlements", since: start)
        return (.ok, try AccountEntitlementsJSON.render(transactions: transactions, renewalInfos: renewals,
                                                         at: ReceiptClock.systemNow(), nextCursor: page.next?.text))
    }

    /// What the store holds of one customer (CustomerPage): by an original transaction id
    /// (digits), its subscription; by an app account token, the subscriptions of its latest
    /// page of transactions. Each subscription's state and the entitlements are the core's
    /// (SubscriptionState, Entitlements); nil when the store holds nothing of it.
    func customer(_ id: String) async throws -> CustomerView? {
        let start = ContinuousClock.now
        let byOriginal = id.utf8.allSatisfy { (48...57).contains($0) }
        var subscriptionIDs = [id]
        if !byOriginal {
            let page = try await reads.transactions(appAccountToken: id, after: nil, limit: StoreSchema.maxPageTransactions).answer()
            subscriptionIDs = Array(Set(Self.decoded(page.transactions).compactMap(\.originalTransactionID))).sorted()
        }
        guard !subscriptionIDs.isEmpty else { return nil }
        let found = try await reads.subscriptions(subscriptionIDs, transactionsEach: StoreSchema.stateTransactionsPerSubscription).answer()
        let transactions = Self.decoded(found.transactions)
        guard !transactions.isEmpty else { return nil }
        let renewalInfos = Self.decoded(found.renewalInfos)
        let events = try await store.latestEvents(orderingKeys: subscriptionIDs, limit: CustomerView.maxEvents)
        metrics.recordStore(operation: "read_customer", since: start)
        let now = ReceiptClock.systemNow()
        let states = subscriptionIDs.compactMap { subscription in
            SubscriptionState(originalTransactionID: subscription, transactions: transactions,
                              renewalInfo: renewalInfos.first { $0.originalTransactionID == subscription }, at: now)
        }
        return CustomerView(id: id, isAccount: !byOriginal, at: now, states: states,
                            entitlements: try Entitlements.ofUnverified(payloads: transactions + renewalInfos, at: now),
                            transactions: transactions, renewalInfos: renewalInfos, events: events)
    }

    /// `GET /v1/consent/{appTransactionId}`: 200 with the consent state (ConsentStateJSON).
    func consent(appTransactionID: String) async throws -> (HTTPResponse.Status, [UInt8]) {
        let start = ContinuousClock.now
        let rescission = try await reads.consentRescission(appTransactionID: appTransactionID).answer()
        metrics.recordStore(operation: "read_consent", since: start)
        return (.ok, ConsentStateJSON.render(appTransactionID: appTransactionID, rescission: rescission))
    }

    /// What the store knows of a verifyReceipt request's subscriptions (nil for none asked).
    func known(_ subscriptionIDs: [String]) throws -> Reply<KnownSubscriptions?> {
        guard !subscriptionIDs.isEmpty else { return .now(nil) }
        let start = ContinuousClock.now
        let each = StoreSchema.maxTransactionsPerSubscription
        switch try reads.subscriptions(subscriptionIDs, transactionsEach: each) {
        case .now(let found): return .now(known(found, since: start))
        case .later(let read): return .later { known(try await read(), since: start) }
        }
    }

    private func known(_ found: StoredSubscriptions, since start: ContinuousClock.Instant) -> KnownSubscriptions {
        let known = KnownSubscriptions(transactions: Self.decoded(found.transactions), renewalInfos: Self.decoded(found.renewalInfos))
        metrics.recordStore(operation: "read_known", since: start)
        return known
    }

    /// Stored payloads were verified when they arrived, so only their payloads are
    /// decoded (`decodeVerifiedBefore`: a read never looks at a header); one that no
    /// longer decodes (a store edited by hand) is left out rather than believed.
    static func decoded(_ tokens: [String]) -> [SignedPayload] {
        tokens.compactMap { try? SignedPayload.decodeVerifiedBefore($0) }
    }

    static func refusal(_ error: ReceiptError) -> [UInt8] { ServerAnswer.refusal(error) }
}
