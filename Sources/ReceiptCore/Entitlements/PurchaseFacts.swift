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
    /// Epoch milliseconds.
    public let purchaseDate: Int64?
    public let expiresDate: Int64?
    /// Refunded, cancelled or revoked: counts as never purchased.
    public let isCancelled: Bool
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
        purchaseDate = purchase.purchaseDate?.millisecondsSince1970
        expiresDate = purchase.expiresDate?.millisecondsSince1970
        isCancelled = purchase.cancellationDate != nil
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
        purchaseDate = payload.date("purchaseDate")
        expiresDate = payload.date("expiresDate")
        isCancelled = payload.date("revocationDate") != nil
        quantity = payload.integer("quantity")
        (isTrialPeriod, isInIntroOfferPeriod) = payload.introductoryOffer
        statedKind = payload.string("type").flatMap(ProductKind.init(transactionType:))
        signedDate = payload.signingDate
    }
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
