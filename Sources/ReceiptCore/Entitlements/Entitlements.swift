/// Why a purchase gives nothing at the instant asked about.
public enum InactiveReason: String, Sendable {
    /// Its period (auto-renewable, or non-renewing with a known duration) has ended.
    case expired
    /// Refunded or cancelled: counts as never purchased (docs/FORMAT.md §3).
    case cancelled
    /// A consumable: delivered once, it is no ongoing entitlement.
    case consumed
    /// A non-renewing subscription whose duration the catalog does not give.
    case unknownDuration = "unknown_duration"
    /// Neither attribute 1707 nor the catalog says what the product is.
    case unknownProductType = "unknown_product_type"
    /// Its period starts after the instant.
    case notYetStarted = "not_yet_started"
}

/// One purchase entry judged at an instant.
public struct PurchaseStatus: Sendable {
    public let purchase: PurchaseFacts
    public let kind: ProductKind?
    /// When the entitlement it gives ends, if it ends: the expires_date of an
    /// auto-renewable period, or purchase date plus catalog duration for a
    /// non-renewing one.
    public let endsAt: Int64?
    /// Nil when the purchase is active at the instant.
    public let inactiveReason: InactiveReason?
    /// The latest period of a subscription whose renewal failed, active because Apple's
    /// billing grace period (the renewal info's gracePeriodExpiresDate) still runs:
    /// `endsAt` is then the grace period's end.
    public var inGracePeriod = false

    public var isActive: Bool { inactiveReason == nil }
}

/// The periods of one auto-renewable subscription (one original_transaction_id),
/// renewals, restores and upgrades included.
public struct SubscriptionStatus: Sendable {
    public let originalTransactionID: String
    /// Every period, oldest first by purchase date.
    public let periods: [PurchaseStatus]
    /// The period with the latest expiry among those not cancelled; nil when every
    /// period was cancelled.
    public let latest: PurchaseStatus?
    public var isActive: Bool { periods.contains { $0.isActive } }
    public var productID: String? { latest?.purchase.productID }
    public var expiresAt: Int64? { latest?.endsAt }
    public var isInTrialPeriod: Bool { latest?.purchase.isTrialPeriod == true }
    public var isInIntroOfferPeriod: Bool { latest?.purchase.isInIntroOfferPeriod == true }
    public var isInGracePeriod: Bool { latest?.inGracePeriod == true }
    /// The subscription this one replaced, as its latest period that names one says.
    public var previousOriginalTransactionID: String? {
        periods.last { $0.purchase.previousOriginalTransactionID != nil }?.purchase.previousOriginalTransactionID
    }
}

/// What a receipt entitles its owner to at one instant (docs/FORMAT.md §3–§4).
public struct Entitlements: Sendable {
    /// The instant judged, in epoch milliseconds.
    public let at: Int64
    /// Every purchase entry: the receipt's in its order, then signed transactions
    /// in the order given; one entry per transaction id.
    public let purchases: [PurchaseStatus]
    /// Auto-renewable subscriptions grouped by original_transaction_id, in order of first appearance.
    public let subscriptions: [SubscriptionStatus]
    /// Product ids whose trial or introductory offer the customer has used, for offer eligibility.
    public let productsWithTrialOrIntroOfferUsed: Set<String>

    /// Product ids with at least one active purchase.
    public var activeProductIDs: Set<String> {
        Set(purchases.filter(\.isActive).compactMap(\.purchase.productID))
    }

    /// Non-consumables owned at the instant: bought and not refunded.
    public var nonConsumables: [PurchaseStatus] { purchases.filter { $0.kind == .nonConsumable && $0.isActive } }

    /// Consumables still in the receipt (Apple drops them once finished), with total
    /// quantity per product id; refunded units are left out (all of a fully refunded
    /// purchase, the refunded units of a prorated refund).
    public var consumableQuantities: [String: Int64] {
        purchases.filter { $0.kind == .consumable && $0.inactiveReason == .consumed }
            .reduce(into: [:]) { totals, status in
                totals[status.purchase.productID ?? "", default: 0] += status.purchase.heldQuantity
            }
    }

    /// Judges a receipt whose verification passed. A failed verification throws
    /// its status: entitlements are never computed from an unbelieved receipt by accident.
    public static func of(_ receipt: Receipt, verified verification: VerificationResult, at instant: Int64,
                          catalog: ProductCatalog = ProductCatalog()) throws(ReceiptError) -> Entitlements {
        guard verification.isValid else {
            throw ReceiptError(verification.status, "entitlements of a receipt that did not verify (\(verification.status.name))")
        }
        return ofUnverified(receipt, at: instant, catalog: catalog)
    }

    /// Judges a receipt without any verification: only for callers that verified it
    /// some other way, or that want to inspect what a receipt claims.
    public static func ofUnverified(_ receipt: Receipt, at instant: Int64,
                                    catalog: ProductCatalog = ProductCatalog()) -> Entitlements {
        of(receipt.purchases.map(PurchaseFacts.init), at: instant, catalog: catalog)
    }

    /// Judges one customer's signed transactions, and the receipt of an older app
    /// version if there is one, together. Every verification must have passed: the
    /// first that did not throws its status. A transaction in both, or signed twice,
    /// counts once: the signed transaction over the receipt's entry, the later
    /// signing over the earlier (it may carry a revocation the other does not).
    /// A notification counts as the transaction it carries (`data.signedTransactionInfo`,
    /// which its verification covers). `names`: what errors call each transaction and
    /// the receipt (file names, say), in that order; by default their index.
    ///
    /// `gracePeriodEnds`: original transaction id → the end of the billing grace period
    /// its renewal info names (SubscriptionState.gracePeriodEnds): until then, the latest
    /// period of that subscription stays active though it has ended, as Apple grants it.
    public static func of(transactions: [(SignedPayload, VerificationResult)], receipt: (Receipt, VerificationResult)? = nil,
                          at instant: Int64, catalog: ProductCatalog = ProductCatalog(),
                          names: [String] = [], gracePeriodEnds: [String: Int64] = [:]) throws(ReceiptError) -> Entitlements {
        for (index, (_, verification)) in transactions.enumerated() where !verification.isValid {
            throw ReceiptError(verification.status, "entitlements of \(inputName(index, names, "signed transaction \(index)")) "
                               + "that did not verify (\(verification.status.name))")
        }
        if let (_, verification) = receipt, !verification.isValid {
            throw ReceiptError(verification.status, "entitlements of \(inputName(transactions.count, names, "a receipt")) "
                               + "that did not verify (\(verification.status.name))")
        }
        return try ofUnverified(transactions: transactions.map(\.0), receipt: receipt?.0, at: instant, catalog: catalog,
                                names: names, gracePeriodEnds: gracePeriodEnds)
    }

    /// The same without verification: only for payloads verified some other way.
    /// A payload that neither is nor carries a transaction is `RECEIPT_E_INVALID_ARGUMENT`.
    public static func ofUnverified(transactions: [SignedPayload], receipt: Receipt? = nil, at instant: Int64,
                                    catalog: ProductCatalog = ProductCatalog(), names: [String] = [],
                                    gracePeriodEnds: [String: Int64] = [:]) throws(ReceiptError) -> Entitlements {
        var signed: [PurchaseFacts] = []
        for (index, payload) in transactions.enumerated() {
            guard let facts = payload.carriedTransaction().flatMap(PurchaseFacts.init(transaction:)) else {
                let what = payload.kind == .notification ? "a notification that carries no signed transaction"
                                                         : "a \(payload.kind.rawValue), not a transaction"
                throw ReceiptError(.invalidArgument, "\(inputName(index, names, "signed payload \(index)")) is \(what)")
            }
            signed.append(facts)
        }
        return of(deduplicated(receipt.map { $0.purchases.map(PurchaseFacts.init) } ?? [], signed), at: instant, catalog: catalog,
                  gracePeriodEnds: gracePeriodEnds)
    }

    /// The caller's name for input `index` when it gave one, else `fallback`.
    private static func inputName(_ index: Int, _ names: [String], _ fallback: String) -> String {
        names.indices.contains(index) ? names[index] : fallback
    }

    /// One entry per transaction id (entries without one are all kept).
    static func deduplicated(_ fromReceipt: [PurchaseFacts], _ signed: [PurchaseFacts]) -> [PurchaseFacts] {
        var latestSigned: [String: Int] = [:]
        for (index, facts) in signed.enumerated() {
            guard let id = facts.transactionID else { continue }
            if let kept = latestSigned[id], (signed[kept].signedDate ?? .min) >= (facts.signedDate ?? .min) { continue }
            latestSigned[id] = index
        }
        let keptSigned = signed.enumerated().filter { index, facts in
            facts.transactionID.map { latestSigned[$0] == index } ?? true
        }.map(\.element)
        return fromReceipt.filter { $0.transactionID.map { latestSigned[$0] == nil } ?? true } + keptSigned
    }

    static func of(_ purchases: [PurchaseFacts], at instant: Int64, catalog: ProductCatalog,
                   gracePeriodEnds: [String: Int64] = [:]) -> Entitlements {
        var statuses = purchases.map { judge($0, at: instant, catalog: catalog) }
        extendGracePeriods(&statuses, gracePeriodEnds, at: instant)
        var order: [String] = []
        var groups: [String: [PurchaseStatus]] = [:]
        for status in statuses where status.kind == .autoRenewable {
            let key = status.purchase.originalTransactionID ?? status.purchase.transactionID ?? ""
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(status)
        }
        let subscriptions = order.map { key in
            let periods = groups[key, default: []].sorted {
                ($0.purchase.purchaseDate ?? .min) < ($1.purchase.purchaseDate ?? .min)
            }
            let latest = periods.filter { $0.inactiveReason != .cancelled }.max { ($0.endsAt ?? .min) < ($1.endsAt ?? .min) }
            return SubscriptionStatus(originalTransactionID: key, periods: periods, latest: latest)
        }
        let offersUsed = Set(statuses.filter {
            $0.inactiveReason != .cancelled && ($0.purchase.isTrialPeriod || $0.purchase.isInIntroOfferPeriod)
        }.compactMap(\.purchase.productID))
        return Entitlements(at: instant, purchases: statuses, subscriptions: subscriptions,
                            productsWithTrialOrIntroOfferUsed: offersUsed)
    }

    static func judge(_ purchase: PurchaseFacts, at instant: Int64, catalog: ProductCatalog) -> PurchaseStatus {
        // Apple documents expires_date (1708) as present only for auto-renewable
        // subscriptions, so it identifies one where neither 1707 (absent from every
        // Xcode receipt) nor the catalog says what the product is.
        let kind = purchase.statedKind
            ?? purchase.productID.flatMap { catalog.kinds[$0] }
            ?? (purchase.expiresDate != nil ? .autoRenewable : nil)
        let start = purchase.purchaseDate
        var end: Int64?
        let reason: InactiveReason?
        // A consumable partly refunded (1 of 3) still delivered the units it holds; any
        // other revocation takes the whole purchase back, as StoreKit's entitlements do.
        if purchase.isCancelled && !(kind == .consumable && purchase.heldQuantity > 0) {
            reason = .cancelled
        } else {
            switch kind {
            case nil:
                reason = .unknownProductType
            case .consumable:
                reason = .consumed
            case .nonConsumable:
                reason = nil
            case .autoRenewable:
                end = purchase.expiresDate
                reason = period(start: start, end: end, at: instant)
            case .nonRenewing:
                if let start, let duration = purchase.productID.flatMap({ catalog.nonRenewingDurations[$0] }) {
                    end = start + duration
                    reason = period(start: start, end: end, at: instant)
                } else {
                    reason = .unknownDuration
                }
            }
        }
        return PurchaseStatus(purchase: purchase, kind: kind, endsAt: end, inactiveReason: reason)
    }

    /// Makes the latest period of each subscription in a grace period at `instant` active
    /// until the grace period ends: only the subscription's latest period (by its end,
    /// refunded ones included, so a refunded last period grants nothing), and only when
    /// it has ended: the failed renewal after it is what the grace covers.
    private static func extendGracePeriods(_ statuses: inout [PurchaseStatus], _ ends: [String: Int64], at instant: Int64) {
        for (originalTransactionID, graceEnd) in ends where instant < graceEnd {
            let periods = statuses.indices.filter {
                statuses[$0].kind == .autoRenewable
                    && (statuses[$0].purchase.originalTransactionID ?? statuses[$0].purchase.transactionID) == originalTransactionID
            }
            let expiries = periods.map { statuses[$0].purchase.expiresDate ?? .min }
            guard let best = expiries.indices.max(by: { expiries[$0] < expiries[$1] }) else { continue }
            let latest = periods[best]
            guard statuses[latest].inactiveReason == .expired, let ended = statuses[latest].endsAt, ended < graceEnd else { continue }
            var extended = PurchaseStatus(purchase: statuses[latest].purchase, kind: .autoRenewable, endsAt: graceEnd,
                                          inactiveReason: nil)
            extended.inGracePeriod = true
            statuses[latest] = extended
        }
    }

    /// Active over [start, end): a period needs both ends to give anything.
    private static func period(start: Int64?, end: Int64?, at instant: Int64) -> InactiveReason? {
        guard let end else { return .expired }
        if let start, instant < start { return .notYetStarted }
        return instant < end ? nil : .expired
    }
}
