/// Renders a receipt as the `receipt` object of the App Store's verifyReceipt
/// response: Apple's key names and order, every date three ways (`…_date`,
/// `…_date_ms`, `…_date_pst`), app-level numbers as JSON numbers and in-app values
/// as strings, as Apple types them. Absent fields are left out, as Apple does.
///
/// `request_date*` (the time of the request) only when the caller gives it. Not
/// derivable from a receipt, so never written: `download_id`, and the in-app `cancellation_reason` and
/// `subscription_group_identifier`, which the App Store adds from its own records.
public enum AppStoreReceiptJSON {
    public static func render(_ receipt: Receipt, indent: Int? = nil) -> String {
        var writer = JSONWriter(indent: indent)
        write(receipt, key: nil, into: &writer)
        return writer.string
    }

    /// `renderedPurchases`: the in_app entries already rendered (compact), in receipt order.
    package static func write(_ receipt: Receipt, key: String?, requestDateMilliseconds: Int64? = nil,
                              renderedPurchases: [[UInt8]]? = nil, into writer: inout JSONWriter) {
        writer.beginObject(key)
        ifPresent(receipt.receiptType) { writer.string(field: ReceiptField.receiptType.staticName, $0) }
        // Apple documents adam_id as the same value as app_item_id.
        ifPresent(receipt.appItemID) { writer.number(field: "adam_id", $0); writer.number(field: ReceiptField.appItemID.staticName, $0) }
        ifPresent(receipt.bundleID) { writer.string(field: ReceiptField.bundleID.staticName, $0) }
        ifPresent(receipt.applicationVersion) { writer.string(field: ReceiptField.applicationVersion.staticName, $0) }
        ifPresent(receipt.versionExternalIdentifier) { writer.number(field: ReceiptField.versionExternalIdentifier.staticName, $0) }
        date(ReceiptField.receiptCreationDate.staticName, receipt.receiptCreationDate, &writer)
        ifPresent(requestDateMilliseconds) { dateForms("request_date", $0, &writer) }
        date(ReceiptField.originalPurchaseDate.staticName, receipt.originalPurchaseDate, &writer)
        date(ReceiptField.expirationDate.staticName, receipt.expirationDate, &writer)
        ifPresent(receipt.originalApplicationVersion) { writer.string(field: ReceiptField.originalApplicationVersion.staticName, $0) }
        writer.beginArray("in_app")
        if let renderedPurchases {
            for entry in renderedPurchases { writer.raw(nil, entry) }
        } else {
            for purchase in receipt.purchases { write(purchase, key: nil, into: &writer) }
        }
        writer.endArray()
        writer.endObject()
    }

    /// One purchase as compact JSON, to be written more than once.
    package static func render(_ purchase: InAppPurchase) -> [UInt8] {
        var writer = JSONWriter(capacity: 768)
        write(purchase, key: nil, into: &writer)
        return writer.bytes
    }

    /// One entry of `in_app` (and of `latest_receipt_info`, which has the same shape).
    package static func write(_ purchase: InAppPurchase, key: String?, into writer: inout JSONWriter) {
        writer.beginObject(key)
        ifPresent(purchase.quantity) { writer.string(field: ReceiptField.quantity.staticName, String($0)) }
        ifPresent(purchase.productID) { writer.string(field: ReceiptField.productID.staticName, $0) }
        ifPresent(purchase.transactionID) { writer.string(field: ReceiptField.transactionID.staticName, $0) }
        ifPresent(purchase.originalTransactionID) { writer.string(field: ReceiptField.originalTransactionID.staticName, $0) }
        date(ReceiptField.purchaseDate.staticName, purchase.purchaseDate, &writer)
        date(ReceiptField.originalPurchaseDate.staticName, purchase.originalPurchaseDate, &writer)
        date(ReceiptField.expiresDate.staticName, purchase.expiresDate, &writer)
        date(ReceiptField.cancellationDate.staticName, purchase.cancellationDate, &writer)
        ifPresent(purchase.webOrderLineItemID) { writer.string(field: ReceiptField.webOrderLineItemID.staticName, String($0)) }
        ifPresent(purchase.isTrialPeriod) { writer.string(field: ReceiptField.isTrialPeriod.staticName, $0 ? "true" : "false") }
        ifPresent(purchase.isInIntroOfferPeriod) { writer.string(field: ReceiptField.isInIntroOfferPeriod.staticName, $0 ? "true" : "false") }
        ifPresent(purchase.promotionalOfferID) { writer.string(field: ReceiptField.promotionalOfferID.staticName, $0) }
        writer.endObject()
    }

    /// Keys are the fields' own names (ReceiptField.staticName), never typed out again.
    private static func date(_ key: StaticString, _ date: ReceiptDate?, _ writer: inout JSONWriter) {
        guard let milliseconds = date?.millisecondsSince1970 else { return }
        dateForms(key, milliseconds, &writer)
    }

    /// A date as Apple writes each: `key` (GMT text), `key_ms`, `key_pst`.
    static func dateForms(_ key: StaticString, _ milliseconds: Int64, _ writer: inout JSONWriter) {
        writer.unescapedString(field: key) { AppStoreDateFormat.appendGMT(milliseconds, to: &$0) }
        writer.unescapedString(field: key, suffix: "_ms") { $0.append(contentsOf: String(milliseconds).utf8) }
        writer.unescapedString(field: key, suffix: "_pst") { AppStoreDateFormat.appendPacific(milliseconds, to: &$0) }
    }
}
