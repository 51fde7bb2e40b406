/// The Advanced Commerce API's server calls (API 1.1: Apple's documentation and the
/// request models of its server libraries), in the same table as the App Store Server
/// API's: the same host, bearer token, checks before sending, and verified answers.
/// Names follow Apple's libraries (`cancel_subscription`, `revoke_subscription`, …).
/// Lengths are Apple's validators': a SKU 128 bytes, a description 45 characters,
/// a display name 30.
extension ServerAPICall {
    static let sku = ServerAPIValueKind.identifier(maxLength: 128)
    static let itemDescription = ServerAPIValueKind.text(maxCharacters: 45)
    static let displayName = ServerAPIValueKind.text(maxCharacters: 30)
    static let refundReasons = ["UNINTENDED_PURCHASE", "FULFILLMENT_ISSUE", "UNSATISFIED_WITH_PURCHASE", "LEGAL", "OTHER",
                                "MODIFY_ITEMS_REFUND", "SIMULATE_REFUND_DECLINE"]
    static let refundTypes = ["FULL", "PRORATED", "CUSTOM"]
    static let effective = ServerAPIValueKind.names(["IMMEDIATELY", "NEXT_BILL_CYCLE"])
    /// Apple's limit on the items of one request is not documented; 1 to 100 bounds what is checked.
    static let maxItems = 100

    /// RequestInfo: every Advanced Commerce request carries one.
    static let requestInfo = ServerAPIValueKind.object([
        ServerAPIMember("requestReferenceId", .uuid, required: true),
        ServerAPIMember("appAccountToken", .uuid),
        ServerAPIMember("consistencyToken", .identifier(maxLength: 4096)),
    ])

    /// An item with its SKU, description and display name (migrated items and their renewals).
    static let describedItem = ServerAPIValueKind.object([
        ServerAPIMember("SKU", sku, required: true),
        ServerAPIMember("description", itemDescription, required: true),
        ServerAPIMember("displayName", displayName, required: true),
    ])

    /// A call on one subscription or transaction: POST to `path` + transaction id, with
    /// requestInfo and `members` in the body.
    private static func advancedCommerce(_ name: String, _ path: String,
                                         _ members: [Parameter]) -> ServerAPICall {
        ServerAPICall(name, "POST", "/advancedCommerce/v1/\(path)/{transactionId}", body: .json,
                      [.path("transactionId", .transactionID), .body("requestInfo", requestInfo, required: true)] + members)
    }

    static let advancedCommerceCalls: [ServerAPICall] = [
        advancedCommerce("cancel_subscription", "subscription/cancel", [.body("storefront", .storefront)]),
        advancedCommerce("revoke_subscription", "subscription/revoke", [
            .body("refundRiskingPreference", .bool, required: true),
            .body("refundType", .names(refundTypes), required: true),
            .body("refundReason", .names(refundReasons), required: true),
            .body("storefront", .storefront),
        ]),
        advancedCommerce("request_transaction_refund", "transaction/requestRefund", [
            .body("items", .list(.object([
                ServerAPIMember("SKU", sku, required: true),
                ServerAPIMember("revoke", .bool, required: true),
                ServerAPIMember("refundReason", .names(refundReasons), required: true),
                ServerAPIMember("refundType", .names(refundTypes), required: true),
                ServerAPIMember("refundAmount", .integer(0...Int64.max)),
            ]), max: maxItems), required: true),
            .body("refundRiskingPreference", .bool, required: true),
            .body("currency", .currency),
            .body("storefront", .storefront),
        ]),
        advancedCommerce("change_subscription_metadata", "subscription/changeMetadata", [
            .body("descriptors", .object([
                ServerAPIMember("effective", effective, required: true),
                ServerAPIMember("description", itemDescription),
                ServerAPIMember("displayName", displayName),
            ])),
            .body("items", .list(.object([
                ServerAPIMember("currentSKU", sku, required: true),
                ServerAPIMember("effective", effective, required: true),
                ServerAPIMember("SKU", sku),
                ServerAPIMember("description", itemDescription),
                ServerAPIMember("displayName", displayName),
            ]), max: maxItems)),
            .body("storefront", .storefront),
            .body("taxCode", .identifier(maxLength: 64)),
        ]),
        advancedCommerce("change_subscription_price", "subscription/changePrice", [
            .body("items", .list(.object([
                ServerAPIMember("SKU", sku, required: true),
                ServerAPIMember("price", .integer(0...Int64.max), required: true),
                ServerAPIMember("dependentSKUs", .list(sku, max: maxItems)),
            ]), max: maxItems), required: true),
            .body("currency", .currency),
            .body("storefront", .storefront),
        ]),
        advancedCommerce("migrate_subscription", "subscription/migrate", [
            .body("descriptors", .object([
                ServerAPIMember("description", itemDescription, required: true),
                ServerAPIMember("displayName", displayName, required: true),
            ]), required: true),
            .body("items", .list(describedItem, max: maxItems), required: true),
            .body("targetProductId", productID, required: true),
            .body("taxCode", .identifier(maxLength: 64), required: true),
            .body("renewalItems", .list(describedItem, max: maxItems)),
            .body("storefront", .storefront),
        ]),
    ]
}
