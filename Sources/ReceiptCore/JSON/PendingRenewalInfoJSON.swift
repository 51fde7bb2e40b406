/// A StoreKit 2 signed renewal info written as an entry of verifyReceipt's
/// `pending_renewal_info` (docs/FORMAT.md §5), values as strings as Apple typed
/// them: `auto_renew_status` "1"/"0", `expiration_intent` "1"–"5",
/// `is_in_billing_retry_period` "1"/"0", `price_consent_status` "0"/"1" (from
/// `priceIncreaseStatus`), `grace_period_expires_date` three ways. Members the
/// renewal info does not carry are left out, as Apple leaves them out.
enum PendingRenewalInfoJSON {
    static func write(_ renewal: SignedPayload, into writer: inout JSONWriter) {
        writer.beginObject()
        ifPresent(renewal.string("autoRenewProductId")) { writer.string(field: "auto_renew_product_id", $0) }
        ifPresent(renewal.integer("autoRenewStatus")) { writer.string(field: "auto_renew_status", String($0)) }
        ifPresent(renewal.integer("expirationIntent")) { writer.string(field: "expiration_intent", String($0)) }
        ifPresent(renewal.date("gracePeriodExpiresDate")) { AppStoreReceiptJSON.dateForms("grace_period_expires_date", $0, &writer) }
        ifPresent(renewal.boolean("isInBillingRetryPeriod")) { writer.string(field: "is_in_billing_retry_period", $0 ? "1" : "0") }
        switch renewal.integer("offerType") {
        case 2?: ifPresent(renewal.string("offerIdentifier")) { writer.string(field: "promotional_offer_id", $0) }
        case 3?: ifPresent(renewal.string("offerIdentifier")) { writer.string(field: "offer_code_ref_name", $0) }
        default: break
        }
        ifPresent(renewal.originalTransactionID) { writer.string(field: "original_transaction_id", $0) }
        ifPresent(renewal.integer("priceIncreaseStatus")) { writer.string(field: "price_consent_status", String($0)) }
        ifPresent(renewal.productID) { writer.string(field: "product_id", $0) }
        writer.endObject()
    }
}
