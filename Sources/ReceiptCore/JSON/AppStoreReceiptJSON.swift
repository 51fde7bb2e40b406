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

    package static func write(_ receipt: Receipt, key: String?, into writer: inout JSONWriter) {
        writer.beginObject(key)
        ifPresent(receipt.receiptType) { writer.string(ReceiptField.receiptType.name, $0) }
        // Apple documents adam_id as the same value as app_item_id.
        ifPresent(receipt.appItemID) { writer.number("adam_id", $0); writer.number(ReceiptField.appItemID.name, $0) }
        ifPresent(receipt.bundleID) { writer.string(ReceiptField.bundleID.name, $0) }
        ifPresent(receipt.applicationVersion) { writer.string(ReceiptField.applicationVersion.name, $0) }
        ifPresent(receipt.versionExternalIdentifier) { writer.number(ReceiptField.versionExternalIdentifier.name, $0) }
        date(ReceiptField.receiptCreationDate.name, receipt.receiptCreationDate, &writer)
        date(ReceiptField.originalPurchaseDate.name, receipt.originalPurchaseDate, &writer)
        date(ReceiptField.expirationDate.name, receipt.expirationDate, &writer)
        ifPresent(receipt.originalApplicationVersion) { writer.string(ReceiptField.originalApplicationVersion.name, $0) }
        writer.beginArray("in_app")
        for purchase in receipt.purchases { write(purchase, key: nil, into: &writer) }
        writer.endArray()
        writer.endObject()
    }

    /// One entry of `in_app` (and of `latest_receipt_info`, which has the same shape).
    package static func write(_ purchase: InAppPurchase, key: String?, into writer: inout JSONWriter) {
        writer.beginObject(key)
        ifPresent(purchase.quantity) { writer.string(ReceiptField.quantity.name, String($0)) }
        ifPresent(purchase.productID) { writer.string(ReceiptField.productID.name, $0) }
        ifPresent(purchase.transactionID) { writer.string(ReceiptField.transactionID.name, $0) }
        ifPresent(purchase.originalTransactionID) { writer.string(ReceiptField.originalTransactionID.name, $0) }
        date(ReceiptField.purchaseDate.name, purchase.purchaseDate, &writer)
        date(ReceiptField.originalPurchaseDate.name, purchase.originalPurchaseDate, &writer)
        date(ReceiptField.expiresDate.name, purchase.expiresDate, &writer)
        date(ReceiptField.cancellationDate.name, purchase.cancellationDate, &writer)
        ifPresent(purchase.webOrderLineItemID) { writer.string(ReceiptField.webOrderLineItemID.name, String($0)) }
        ifPresent(purchase.isTrialPeriod) { writer.string(ReceiptField.isTrialPeriod.name, $0 ? "true" : "false") }
        ifPresent(purchase.isInIntroOfferPeriod) { writer.string(ReceiptField.isInIntroOfferPeriod.name, $0 ? "true" : "false") }
        ifPresent(purchase.promotionalOfferID) { writer.string(ReceiptField.promotionalOfferID.name, $0) }
        writer.endObject()
    }

    /// Keys are the fields' own names (ReceiptField.name), never typed out again.
    private static func date(_ key: String, _ date: ReceiptDate?, _ writer: inout JSONWriter) {
        guard let milliseconds = date?.millisecondsSince1970 else { return }
        writer.string(key, AppStoreDateFormat.gmt(milliseconds))
        writer.string(key + "_ms", String(milliseconds))
        writer.string(key + "_pst", AppStoreDateFormat.pacific(milliseconds))
    }
}
