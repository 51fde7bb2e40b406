/// A JWS's values for a batch's columns (receipt.h: receipt_batch_row_t and
/// receipt_batch_purchase_t), which are named as a receipt names them. This is the
/// one place that says which member of each kind of payload fills which column.
extension SignedPayload {
    /// The row's columns. bundle_id: the payload's app (a notification's, from whichever
    /// object it carries; a renewal info names none); receipt_type: its environment
    /// (`environment`, an AppTransaction's `receiptType`: Production, Sandbox, Xcode);
    /// the versions: an AppTransaction's; creation date: the signing date.
    public var batchRow: BatchRowColumns {
        BatchRowColumns(bundleID: firstText(kind.paths.bundleID),
                        applicationVersion: kind == .appTransaction ? string("applicationVersion") : nil,
                        originalApplicationVersion: kind == .appTransaction ? string("originalApplicationVersion") : nil,
                        receiptType: firstText(kind.paths.environment), creationDate: signingDate)
    }

    /// The signed transaction this payload is or carries (a batch row's one purchase;
    /// what entitlements count for a notification): this payload when it is one; the one a notification carries in `data.signedTransactionInfo`, decoded
    /// (nil when that cannot be read, which the notification's verdict reports); else nil.
    public func carriedTransaction(limits: ParseLimits = .default) -> SignedPayload? {
        switch kind {
        case .transaction:
            return self
        case .notification:
            guard let nested = string("data.signedTransactionInfo"),
                  let transaction = try? SignedPayload.decode(nested, limits: limits),
                  transaction.kind == .transaction else { return nil }
            return transaction
        default:
            return nil
        }
    }

    /// A signed transaction as one purchase: cancellation is `revocationDate`, the
    /// offer flags as `introductoryOffer` reads them; nil for any other kind of payload.
    public var batchPurchase: BatchPurchaseColumns? {
        guard kind == .transaction else { return nil }
        let offer = introductoryOffer
        return BatchPurchaseColumns(
            productID: string("productId"), transactionID: string("transactionId"),
            originalTransactionID: string("originalTransactionId"), purchaseDate: date("purchaseDate"),
            originalPurchaseDate: date("originalPurchaseDate"), expiresDate: date("expiresDate"),
            cancellationDate: date("revocationDate"), quantity: integer("quantity"),
            // A string of digits in a JWS, a number in a receipt.
            webOrderLineItemID: string("webOrderLineItemId").flatMap { Int64($0) },
            isTrialPeriod: offer.isTrialPeriod, isInIntroOfferPeriod: offer.isInIntroOfferPeriod)
    }
}

public struct BatchRowColumns: Sendable, Equatable {
    public let bundleID, applicationVersion, originalApplicationVersion, receiptType: String?
    /// Epoch milliseconds.
    public let creationDate: Int64?
}

public struct BatchPurchaseColumns: Sendable, Equatable {
    public let productID, transactionID, originalTransactionID: String?
    /// Epoch milliseconds, as every date here.
    public let purchaseDate, originalPurchaseDate, expiresDate, cancellationDate: Int64?
    public let quantity, webOrderLineItemID: Int64?
    public let isTrialPeriod, isInIntroOfferPeriod: Bool
}
