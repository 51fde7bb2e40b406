/// Renders a receipt as the `receipt` object of the App Store's verifyReceipt
/// response: Apple's key names and order, every date three ways (`…_date`,
/// `…_date_ms`, `…_date_pst`), app-level numbers as JSON numbers and in-app values
/// as strings, as Apple types them. Absent fields are left out, as Apple does.
///
/// Not derivable from a receipt, so never written: `request_date*` (the time of
/// the request), `download_id`, and the in-app `cancellation_reason` and
/// `subscription_group_identifier`, which the App Store adds from its own records.
public enum AppStoreReceiptJSON {
    public static func render(_ receipt: Receipt, indent: Int? = nil) -> String {
        var writer = JSONWriter(indent: indent)
        write(receipt, key: nil, into: &writer)
        return writer.string
    }

    public static func write(_ receipt: Receipt, key: String?, into writer: inout JSONWriter) {
        writer.beginObject(key)
        ifPresent(receipt.receiptType) { writer.string("receipt_type", $0) }
        // Apple documents adam_id as the same value as app_item_id.
        ifPresent(receipt.appItemID) { writer.number("adam_id", $0); writer.number("app_item_id", $0) }
        ifPresent(receipt.bundleID) { writer.string("bundle_id", $0) }
        ifPresent(receipt.applicationVersion) { writer.string("application_version", $0) }
        ifPresent(receipt.versionExternalIdentifier) { writer.number("version_external_identifier", $0) }
        date("receipt_creation_date", receipt.receiptCreationDate, &writer)
        date("original_purchase_date", receipt.originalPurchaseDate, &writer)
        date("expiration_date", receipt.expirationDate, &writer)
        ifPresent(receipt.originalApplicationVersion) { writer.string("original_application_version", $0) }
        writer.beginArray("in_app")
        for purchase in receipt.purchases { write(purchase, key: nil, into: &writer) }
        writer.endArray()
        writer.endObject()
    }

    /// One entry of `in_app` (and of `latest_receipt_info`, which has the same shape).
    public static func write(_ purchase: InAppPurchase, key: String?, into writer: inout JSONWriter) {
        writer.beginObject(key)
        ifPresent(purchase.quantity) { writer.string("quantity", String($0)) }
        ifPresent(purchase.productID) { writer.string("product_id", $0) }
        ifPresent(purchase.transactionID) { writer.string("transaction_id", $0) }
        ifPresent(purchase.originalTransactionID) { writer.string("original_transaction_id", $0) }
        date("purchase_date", purchase.purchaseDate, &writer)
        date("original_purchase_date", purchase.originalPurchaseDate, &writer)
        date("expires_date", purchase.expiresDate, &writer)
        date("cancellation_date", purchase.cancellationDate, &writer)
        ifPresent(purchase.webOrderLineItemID) { writer.string("web_order_line_item_id", String($0)) }
        ifPresent(purchase.isTrialPeriod) { writer.string("is_trial_period", $0 ? "true" : "false") }
        ifPresent(purchase.isInIntroOfferPeriod) { writer.string("is_in_intro_offer_period", $0 ? "true" : "false") }
        ifPresent(purchase.promotionalOfferID) { writer.string("promotional_offer_id", $0) }
        writer.endObject()
    }

    private static func date(_ key: String, _ date: ReceiptDate?, _ writer: inout JSONWriter) {
        guard let milliseconds = date?.millisecondsSince1970 else { return }
        writer.string(key, AppStoreDateFormat.gmt(milliseconds))
        writer.string(key + "_ms", String(milliseconds))
        writer.string(key + "_pst", AppStoreDateFormat.pacific(milliseconds))
    }
}
