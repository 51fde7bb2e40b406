/// What one auto-renewable subscription (one original transaction id) is at an
/// instant, from every signed transaction known for it and its latest renewal
/// info: the App Store Server API's subscription status, worked out locally from
/// what notifications and the API delivered. Pure: the same payloads and instant
/// give the same state, whatever order they were learnt in.
public struct SubscriptionState: Sendable {
    /// Apple's `status` values (Get All Subscription Statuses).
    public enum Status: Int64, Sendable {
        case active = 1
        case expired = 2
        case billingRetry = 3
        case gracePeriod = 4
        case revoked = 5

        public var name: String {
            switch self {
            case .active: "active"
            case .expired: "expired"
            case .billingRetry: "billing_retry"
            case .gracePeriod: "grace_period"
            case .revoked: "revoked"
            }
        }
    }

    public let originalTransactionID: String
    public let status: Status
    /// The instant judged, epoch milliseconds.
    public let at: Int64
    /// One per transaction id (the latest signing of each), oldest purchase first.
    public let transactions: [SignedPayload]
    /// The period that decides the status, among those bought by the instant (StatusInputs):
    /// the latest-ending one not revoked, or, when every such period was revoked, the latest
    /// purchased; the first purchased when none was bought by the instant.
    public let latestTransaction: SignedPayload
    public let renewalInfo: SignedPayload?

    /// The subscription this one replaced (`previousOriginalTransactionId` of the latest
    /// transaction that names one): a standalone subscription and a subscription bundle, either way.
    public var previousOriginalTransactionID: String? {
        transactions.last { $0.string("previousOriginalTransactionId") != nil }?.string("previousOriginalTransactionId")
    }

    /// Entitled at the instant: active, or in a grace period (Apple: "the customer
    /// continues to have access").
    public var isEntitled: Bool { status == .active || status == .gracePeriod }

    /// Original transaction id → the end of the grace period each of `states` is in, for
    /// Entitlements (`gracePeriodEnds`), so that both say the same of a customer in grace.
    public static func gracePeriodEnds(_ states: [SubscriptionState]) -> [String: Int64] {
        var ends: [String: Int64] = [:]
        for state in states where state.status == .gracePeriod {
            if let end = state.renewalInfo?.date("gracePeriodExpiresDate") { ends[state.originalTransactionID] = end }
        }
        return ends
    }

    /// The same from any mix of payloads (transactions, renewal infos, notifications), for
    /// each subscription their transactions name.
    public static func gracePeriodEnds(payloads: [SignedPayload], at instant: Int64) -> [String: Int64] {
        let subscriptions = Set(payloads.compactMap { $0.carriedTransaction()?.originalTransactionID }).sorted()
        return gracePeriodEnds(subscriptions.compactMap { SubscriptionState(originalTransactionID: $0, payloads: payloads, at: instant) })
    }

    /// Nil when no transaction is known (a renewal info alone says nothing about
    /// access), or when Apple signed them as a purchase that is no auto-renewable
    /// subscription (`oneTimeType`). Transactions of other subscriptions are ignored.
    public init?(originalTransactionID: String, transactions: [SignedPayload], renewalInfo: SignedPayload?, at instant: Int64) {
        let own = transactions.filter { $0.kind == .transaction && $0.originalTransactionID == originalTransactionID }
        guard Self.oneTimeType(of: own) == nil else { return nil }
        // Each period's dates read once: sorting would read them again at every comparison.
        let periods = Self.latestSigning(own).map(Period.init).sorted { $0.purchased < $1.purchased }
        guard let first = periods.first else { return nil }
        let renewal = renewalInfo.flatMap { $0.kind == .renewalInfo && $0.originalTransactionID == originalTransactionID ? $0 : nil }
        // As the subscription stood at the instant: the periods bought by then (refunds as known now).
        let bought = periods.prefix { $0.purchased <= instant }
        let latest = bought.filter { !$0.revoked }.max { $0.expires < $1.expires }
        let lastPurchased = bought.last
        // The renewal info speaks of the renewal after the last period: of none bought after the instant.
        let renewalApplies = bought.count == periods.count
        self.originalTransactionID = originalTransactionID
        at = instant
        self.transactions = periods.map(\.payload)
        latestTransaction = (latest ?? lastPurchased ?? first).payload
        self.renewalInfo = renewal
        status = Status.at(instant, StatusInputs(
            standingPurchased: latest?.purchased, standingExpires: latest?.expires,
            lastPurchaseRevoked: lastPurchased?.revoked ?? false,
            gracePeriodExpires: renewalApplies ? renewal?.date("gracePeriodExpiresDate") : nil,
            inBillingRetry: renewalApplies && renewal?.boolean("isInBillingRetryPeriod") == true))
    }

    /// A transaction with the dates the status reads (absent dates sort first).
    private struct Period {
        let payload: SignedPayload
        let purchased: Int64
        let expires: Int64
        let revoked: Bool

        init(_ payload: SignedPayload) {
            self.payload = payload
            purchased = payload.date("purchaseDate") ?? .min
            expires = payload.date("expiresDate") ?? .min
            revoked = payload.date("revocationDate") != nil
        }
    }

    /// The `type` Apple signed the transactions with when it names a purchase that is no
    /// auto-renewable subscription (Consumable, Non-Consumable, Non-Renewing Subscription):
    /// such a purchase has no subscription status (Get All Subscription Statuses lists auto-renewable
    /// subscriptions only), and judged as one it would read "expired". Nil for an
    /// auto-renewable subscription, and for a type not stated or not known.
    public static func oneTimeType(of transactions: [SignedPayload]) -> String? {
        for transaction in transactions where transaction.kind == .transaction {
            if let type = transaction.string("type"), let kind = ProductKind(transactionType: type), kind != .autoRenewable {
                return type
            }
        }
        return nil
    }

    /// Why `init(originalTransactionID:payloads:at:)` gave no state: a one-time purchase
    /// (`oneTimeType`), or no transaction of that id among the payloads.
    public static func absence(of originalTransactionID: String, in payloads: [SignedPayload]) -> ReceiptError {
        let own = payloads.compactMap { $0.carriedTransaction() }.filter { $0.originalTransactionID == originalTransactionID }
        if let type = oneTimeType(of: own) {
            return ReceiptError(.absent, "original transaction id \(originalTransactionID) is a purchase of type \(type), "
                                         + "not an auto-renewable subscription: it has no subscription status")
        }
        return ReceiptError(.absent, "no signed transaction of original transaction id \(originalTransactionID) among the \(payloads.count) tokens")
    }

    /// The same from any mix of payloads as they come: signed transactions, renewal
    /// infos (the latest signing counts) and notifications (each counts as the
    /// transaction and renewal info it carries). Other kinds are ignored.
    public init?(originalTransactionID: String, payloads: [SignedPayload], at instant: Int64) {
        let renewals = payloads.compactMap { $0.carriedRenewalInfo() }.filter { $0.originalTransactionID == originalTransactionID }
        self.init(originalTransactionID: originalTransactionID, transactions: payloads.compactMap { $0.carriedTransaction() },
                  renewalInfo: Self.latestSigning(renewals, per: \.originalTransactionID).first, at: instant)
    }

    /// One payload per `key` (a transaction id, or a renewal info's original transaction
    /// id): the latest signing (Entitlements' rule), in order of first appearance.
    static func latestSigning(_ payloads: [SignedPayload], per key: (SignedPayload) -> String? = \.transactionID) -> [SignedPayload] {
        var kept: [String: SignedPayload] = [:]
        var order: [String] = []
        for payload in payloads {
            let id = key(payload) ?? ""
            if let earlier = kept[id] {
                if (payload.signingDate ?? .min) > (earlier.signingDate ?? .min) { kept[id] = payload }
            } else {
                kept[id] = payload
                order.append(id)
            }
        }
        return order.compactMap { kept[$0] }
    }
}

extension SignedPayload {
    /// The renewal info this payload is or carries (a notification's `data.signedRenewalInfo`,
    /// decoded; nil when unreadable, which the notification's verdict reports), else nil.
    public func carriedRenewalInfo() -> SignedPayload? {
        switch kind {
        case .renewalInfo:
            return self
        case .notification:
            guard let nested = string("data.signedRenewalInfo"), let info = try? SignedPayload.decode(nested),
                  info.kind == .renewalInfo else { return nil }
            return info
        default:
            return nil
        }
    }
}
