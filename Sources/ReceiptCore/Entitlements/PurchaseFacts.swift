/// What entitlements read of one purchase, whichever signed format it came in: a
/// receipt's in-app entry, or a StoreKit 2 signed transaction. The two name the
/// same facts differently (cancellation_date and revocationDate, 1707 and `type`,
/// is_trial_period and offerType with offerDiscountType); this is the one place
/// that says how they correspond.
public struct PurchaseFacts: Sendable {
    public enum Source: String, Sendable {
        case receipt
        case signedTransaction = "signed_transaction"
    }

    public let source: Source
    public let productID: String?
    public let transactionID: String?
    public let originalTransactionID: String?
    /// The original transaction id of the subscription this one replaced (Apple's
    /// `previousOriginalTransactionId`: a switch between a standalone subscription and a
    /// subscription bundle, or a migration). Nil for receipts.
    public let previousOriginalTransactionID: String?
    /// Epoch milliseconds.
    public let purchaseDate: Int64?
    public let expiresDate: Int64?
    /// Refunded, cancelled or revoked, wholly or in part (cancellation_date, revocationDate).
    /// Counts as never purchased, but for the units a partial refund of a consumable left
    /// (Entitlements.judge).
    public let isCancelled: Bool
    /// Apple's `revocationType` of a signed transaction, as written: REFUND_FULL,
    /// REFUND_PRORATED or FAMILY_REVOKE. Nil for receipts, which carry none.
    public let revocationType: String?
    /// The share of the purchase refunded or revoked, in Apple's milliunits (100000 is all):
    /// 0 when not revoked; a prorated refund's `revocationPercentage`; all of it for every
    /// other revocation, and for a prorated one whose percentage is absent or out of range
    /// (fail closed: what cannot be read grants nothing).
    public let refundedShare: Int64
    public let quantity: Int64?
    public let isTrialPeriod: Bool
    public let isInIntroOfferPeriod: Bool
    /// The kind the purchase itself states (attribute 1707, or the transaction's `type`).
    public let statedKind: ProductKind?
    /// The signing date of a signed transaction, which decides between two copies of it.
    let signedDate: Int64?

    public init(_ purchase: InAppPurchase) {
        source = .receipt
        productID = purchase.productID
        transactionID = purchase.transactionID
        originalTransactionID = purchase.originalTransactionID
        previousOriginalTransactionID = nil
        purchaseDate = purchase.purchaseDate?.millisecondsSince1970
        expiresDate = purchase.expiresDate?.millisecondsSince1970
        isCancelled = purchase.cancellationDate != nil
        revocationType = nil
        refundedShare = isCancelled ? Self.whole : 0
        quantity = purchase.quantity
        isTrialPeriod = purchase.isTrialPeriod == true
        isInIntroOfferPeriod = purchase.isInIntroOfferPeriod == true
        statedKind = purchase.productType.flatMap(ProductKind.init(attribute:))
        signedDate = nil
    }

    /// A signed transaction's facts; nil for any other kind of payload.
    public init?(transaction payload: SignedPayload) {
        guard payload.kind == .transaction else { return nil }
        source = .signedTransaction
        productID = payload.string("productId")
        transactionID = payload.string("transactionId")
        originalTransactionID = payload.string("originalTransactionId")
        previousOriginalTransactionID = payload.string("previousOriginalTransactionId")
        purchaseDate = payload.date("purchaseDate")
        expiresDate = payload.date("expiresDate")
        isCancelled = payload.date("revocationDate") != nil
        revocationType = payload.string("revocationType")
        refundedShare = Self.share(revoked: isCancelled, type: revocationType, percentage: payload.integer("revocationPercentage"))
        quantity = payload.integer("quantity")
        (isTrialPeriod, isInIntroOfferPeriod) = payload.introductoryOffer
        statedKind = payload.string("type").flatMap(ProductKind.init(transactionType:))
        signedDate = payload.signingDate
    }

    /// 100%, in Apple's milliunits.
    public static let whole: Int64 = 100_000

    static func share(revoked: Bool, type: String?, percentage: Int64?) -> Int64 {
        guard revoked else { return 0 }
        guard type == "REFUND_PRORATED", let percentage, (0...whole).contains(percentage) else { return whole }
        return percentage
    }

    /// Units of `quantity` (1 when absent) that the refund took back. Apple's percentage
    /// applies to the whole quantity (1 of 3 refunded is 33.333%) and is rounded to a
    /// milliunit, so a unit counts as refunded once its share less that rounding is
    /// reached: any part of a unit refunded takes the unit back, and 1 of 3 stays 1.
    public var refundedQuantity: Int64 {
        // ceil((units × share − units / 2) / whole), in integers: each unit's share may be off by half a milliunit.
        let numerator = 2 * units * refundedShare - units
        return numerator <= 0 ? 0 : min(units, (numerator + 2 * Self.whole - 1) / (2 * Self.whole))
    }

    /// Units the purchase still holds after any refund.
    public var heldQuantity: Int64 { isCancelled ? units - refundedQuantity : quantity ?? 1 }

    /// The quantity a refund is shared over: 1 when absent; Apple sells at most 10 at
    /// once, and the bound keeps the arithmetic of refundedQuantity in range.
    private var units: Int64 { min(max(quantity ?? 1, 1), 1_000_000) }
}

extension ProductKind {
    /// A signed transaction's `type`, exactly as Apple writes it.
    init?(transactionType: String) {
        switch transactionType {
        case "Auto-Renewable Subscription": self = .autoRenewable
        case "Non-Consumable": self = .nonConsumable
        case "Consumable": self = .consumable
        case "Non-Renewing Subscription": self = .nonRenewing
        default: return nil
        }
    }
}
