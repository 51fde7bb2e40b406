/// A StoreKit 2 signed transaction written as an entry of verifyReceipt's
/// `latest_receipt_info`, in the shape and key order of a receipt's entry
/// (AppStoreReceiptJSON.write), plus what only the App Store's answer carried and a
/// signed transaction states: `cancellation_date` and `cancellation_reason` from
/// `revocationDate` and `revocationReason`, `in_app_ownership_type`,
/// `subscription_group_identifier`, `offer_code_ref_name` and `app_account_token`.
/// The offer flags are read as PurchaseFacts reads them (`introductoryOffer`).
enum SignedTransactionReceiptJSON {
    static func write(_ transaction: SignedPayload, into writer: inout JSONWriter) {
        writer.beginObject()
        ifPresent(transaction.integer("quantity")) { writer.string(field: ReceiptField.quantity.staticName, String($0)) }
        ifPresent(transaction.productID) { writer.string(field: ReceiptField.productID.staticName, $0) }
        ifPresent(transaction.transactionID) { writer.string(field: ReceiptField.transactionID.staticName, $0) }
        ifPresent(transaction.originalTransactionID) { writer.string(field: ReceiptField.originalTransactionID.staticName, $0) }
        date(ReceiptField.purchaseDate.staticName, "purchaseDate", transaction, &writer)
        date(ReceiptField.originalPurchaseDate.staticName, "originalPurchaseDate", transaction, &writer)
        date(ReceiptField.expiresDate.staticName, "expiresDate", transaction, &writer)
        date(ReceiptField.cancellationDate.staticName, "revocationDate", transaction, &writer)
        ifPresent(transaction.integer("revocationReason")) { writer.string(field: "cancellation_reason", String($0)) }
        ifPresent(transaction.firstText(["webOrderLineItemId"])) { writer.string(field: ReceiptField.webOrderLineItemID.staticName, $0) }
        let offer = transaction.introductoryOffer
        writer.string(field: ReceiptField.isTrialPeriod.staticName, offer.isTrialPeriod ? "true" : "false")
        writer.string(field: ReceiptField.isInIntroOfferPeriod.staticName, offer.isInIntroOfferPeriod ? "true" : "false")
        ifPresent(transaction.string("inAppOwnershipType")) { writer.string(field: "in_app_ownership_type", $0) }
        ifPresent(transaction.string("subscriptionGroupIdentifier")) { writer.string(field: "subscription_group_identifier", $0) }
        // offerType 2 is a promotional offer, 3 an offer code; offerIdentifier names either.
        switch transaction.integer("offerType") {
        case 2?: ifPresent(transaction.string("offerIdentifier")) { writer.string(field: ReceiptField.promotionalOfferID.staticName, $0) }
        case 3?: ifPresent(transaction.string("offerIdentifier")) { writer.string(field: "offer_code_ref_name", $0) }
        default: break
        }
        ifPresent(transaction.string("appAccountToken")) { writer.string(field: "app_account_token", $0) }
        writer.endObject()
    }

    private static func date(_ key: StaticString, _ member: String, _ transaction: SignedPayload, _ writer: inout JSONWriter) {
        ifPresent(transaction.date(member)) { AppStoreReceiptJSON.dateForms(key, $0, &writer) }
    }
}
