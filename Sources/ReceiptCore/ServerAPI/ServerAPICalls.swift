/// Every call of the App Store Server API that Apple's App Store Server Library
/// makes (API v1.21 and Retention Messaging), named as Apple's libraries name
/// them, with the members Apple documents. Kinds and ranges follow Apple's
/// documentation and the validators of its library.
extension ServerAPICall {
    public static let all: [ServerAPICall] = transactionCalls + subscriptionCalls + notificationCalls + messagingCalls
        + advancedCommerceCalls

    static let productTypes = ["AUTO_RENEWABLE", "NON_RENEWABLE", "CONSUMABLE", "NON_CONSUMABLE"]
    static let notificationTypes = [
        "SUBSCRIBED", "DID_CHANGE_RENEWAL_PREF", "DID_CHANGE_RENEWAL_STATUS", "OFFER_REDEEMED", "DID_RENEW", "EXPIRED",
        "DID_FAIL_TO_RENEW", "GRACE_PERIOD_EXPIRED", "PRICE_INCREASE", "REFUND", "REFUND_DECLINED", "CONSUMPTION_REQUEST",
        "RENEWAL_EXTENDED", "REVOKE", "TEST", "RENEWAL_EXTENSION", "REFUND_REVERSED", "EXTERNAL_PURCHASE_TOKEN",
        "ONE_TIME_CHARGE", "RESCIND_CONSENT", "METADATA_UPDATE", "MIGRATION", "PRICE_CHANGE",
    ]
    static let notificationSubtypes = [
        "INITIAL_BUY", "RESUBSCRIBE", "DOWNGRADE", "UPGRADE", "AUTO_RENEW_ENABLED", "AUTO_RENEW_DISABLED", "VOLUNTARY",
        "BILLING_RETRY", "PRICE_INCREASE", "GRACE_PERIOD", "PENDING", "ACCEPTED", "BILLING_RECOVERY",
        "PRODUCT_NOT_FOR_SALE", "SUMMARY", "FAILURE", "UNREPORTED",
    ]
    static let productID = ServerAPIValueKind.identifier(maxLength: maxIdentifierBytes)
    static let maxIdentifierBytes = ServerAPIValueKind.maxIdentifierBytes

    static let transactionCalls: [ServerAPICall] = [
        ServerAPICall("get_transaction_info", "GET", "/inApps/v1/transactions/{transactionId}",
                      [.path("transactionId", .transactionID)]),
        ServerAPICall("get_transaction_history", "GET", "/inApps/{version}/history/{transactionId}", paging: .revision, [
            .path("transactionId", .transactionID),
            // v1 is deprecated by Apple; v2 unless the caller asks otherwise.
            .path("version", .names(["v1", "v2"]), default: .string("v2")),
            .query("revision", .identifier(maxLength: 4096)),
            .query("startDate", .epochMilliseconds),
            .query("endDate", .epochMilliseconds),
            .query("productId", .list(productID, max: 100)),
            .query("productType", .list(.names(productTypes), max: 4)),
            .query("sort", .names(["ASCENDING", "DESCENDING"])),
            .query("subscriptionGroupIdentifier", .list(.identifier(maxLength: maxIdentifierBytes), max: 100)),
            .query("inAppOwnershipType", .names(["FAMILY_SHARED", "PURCHASED"])),
            .query("revoked", .bool),
        ], crossCheck: .startBeforeEnd),
        ServerAPICall("get_refund_history", "GET", "/inApps/v2/refund/lookup/{transactionId}", paging: .revision, [
            .path("transactionId", .transactionID),
            .query("revision", .identifier(maxLength: 4096)),
        ]),
        ServerAPICall("look_up_order_id", "GET", "/inApps/v1/lookup/{orderId}",
                      [.path("orderId", .identifier(maxLength: 64))]),
        ServerAPICall("get_app_transaction_info", "GET", "/inApps/v1/transactions/appTransactions/{transactionId}",
                      [.path("transactionId", .transactionID)]),
        ServerAPICall("set_app_account_token", "PUT", "/inApps/v1/transactions/{originalTransactionId}/appAccountToken",
                      body: .json, [
                          .path("originalTransactionId", .transactionID),
                          .body("appAccountToken", .uuid, required: true),
                      ]),
        ServerAPICall("finish_transaction", "POST", "/inApps/v1/transactions/{transactionId}/finish",
                      [.path("transactionId", .transactionID)]),
        ServerAPICall("send_consumption_data", "PUT", "/inApps/v1/transactions/consumption/{transactionId}", body: .json, [
            .path("transactionId", .transactionID),
            .body("customerConsented", .bool),
            .body("consumptionStatus", .integer(0...3)),
            .body("platform", .integer(0...2)),
            .body("sampleContentProvided", .bool),
            .body("deliveryStatus", .integer(0...5)),
            .body("appAccountToken", .uuid),
            .body("accountTenure", .integer(0...7)),
            .body("playTime", .integer(0...7)),
            .body("lifetimeDollarsRefunded", .integer(0...7)),
            .body("lifetimeDollarsPurchased", .integer(0...7)),
            .body("userStatus", .integer(0...4)),
            .body("refundPreference", .integer(0...3)),
        ]),
        ServerAPICall("send_consumption_information", "PUT", "/inApps/v2/transactions/consumption/{transactionId}",
                      body: .json, [
                          .path("transactionId", .transactionID),
                          .body("customerConsented", .bool, required: true),
                          .body("sampleContentProvided", .bool, required: true),
                          .body("deliveryStatus", .names(["DELIVERED", "UNDELIVERED_QUALITY_ISSUE", "UNDELIVERED_WRONG_ITEM",
                                                          "UNDELIVERED_SERVER_OUTAGE", "UNDELIVERED_OTHER"]), required: true),
                          // Milliunits: 100000 is the whole purchase.
                          .body("consumptionPercentage", .integer(0...100_000)),
                          .body("refundPreference", .names(["DECLINE", "GRANT_FULL", "GRANT_PRORATED"])),
                      ]),
    ]

    static let subscriptionCalls: [ServerAPICall] = [
        ServerAPICall("get_all_subscription_statuses", "GET", "/inApps/v1/subscriptions/{transactionId}", [
            .path("transactionId", .transactionID),
            .query("status", .list(.integer(1...5), max: 5)),
        ]),
        ServerAPICall("extend_subscription_renewal_date", "PUT", "/inApps/v1/subscriptions/extend/{originalTransactionId}",
                      body: .json, [
                          .path("originalTransactionId", .transactionID),
                          .body("extendByDays", .integer(1...90), required: true),
                          .body("extendReasonCode", .integer(0...3), required: true),
                          .body("requestIdentifier", .identifier(maxLength: 128), required: true),
                      ]),
        ServerAPICall("extend_renewal_date_for_all_active_subscribers", "POST", "/inApps/v1/subscriptions/extend/mass",
                      body: .json, [
                          .body("extendByDays", .integer(1...90), required: true),
                          .body("extendReasonCode", .integer(0...3), required: true),
                          .body("requestIdentifier", .identifier(maxLength: 128), required: true),
                          .body("storefrontCountryCodes", .list(.storefront, max: 200)),
                          .body("productId", productID, required: true),
                      ]),
        ServerAPICall("get_status_of_subscription_renewal_date_extensions", "GET",
                      "/inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}", [
                          .path("productId", productID),
                          .path("requestIdentifier", .identifier(maxLength: 128)),
                      ]),
    ]

    static let notificationCalls: [ServerAPICall] = [
        ServerAPICall("get_notification_history", "POST", "/inApps/v1/notifications/history", paging: .paginationToken,
                      body: .json, [
                          .query("paginationToken", .identifier(maxLength: 4096)),
                          .body("startDate", .appStoreEraMilliseconds, required: true),
                          .body("endDate", .appStoreEraMilliseconds, required: true),
                          .body("notificationType", .names(notificationTypes)),
                          .body("notificationSubtype", .names(notificationSubtypes)),
                          .body("transactionId", .transactionID),
                          .body("onlyFailures", .bool),
                      ], crossCheck: .notificationFilters),
        ServerAPICall("request_test_notification", "POST", "/inApps/v1/notifications/test"),
        ServerAPICall("get_test_notification_status", "GET", "/inApps/v1/notifications/test/{testNotificationToken}",
                      [.path("testNotificationToken", .identifier(maxLength: maxIdentifierBytes))]),
    ]

    static let bulletPoint = ServerAPIValueKind.object([
        ServerAPIMember("text", .text(maxCharacters: 66), required: true),
        ServerAPIMember("imageIdentifier", .uuid, required: true),
        ServerAPIMember("altText", .text(maxCharacters: 150), required: true),
    ])

    static let messagingCalls: [ServerAPICall] = [
        ServerAPICall("upload_image", "PUT", "/inApps/v1/messaging/image/{imageIdentifier}", body: .png, [
            .path("imageIdentifier", .uuid),
            .query("imageSize", .names(["FULL_SIZE", "BULLET_POINT"])),
            .body("image", .png, required: true),
        ]),
        ServerAPICall("delete_image", "DELETE", "/inApps/v1/messaging/image/{imageIdentifier}", [.path("imageIdentifier", .uuid)]),
        ServerAPICall("get_image_list", "GET", "/inApps/v1/messaging/image/list"),
        ServerAPICall("upload_message", "PUT", "/inApps/v1/messaging/message/{messageIdentifier}", body: .json, [
            .path("messageIdentifier", .uuid),
            .body("header", .text(maxCharacters: 66), required: true),
            .body("body", .text(maxCharacters: 144), required: true),
            .body("image", .object([ServerAPIMember("imageIdentifier", .uuid, required: true),
                                    ServerAPIMember("altText", .text(maxCharacters: 150), required: true)])),
            .body("headerPosition", .names(["ABOVE_BODY", "ABOVE_IMAGE"])),
            .body("bulletPoints", .list(bulletPoint, max: 5)),
        ]),
        ServerAPICall("delete_message", "DELETE", "/inApps/v1/messaging/message/{messageIdentifier}",
                      [.path("messageIdentifier", .uuid)]),
        ServerAPICall("get_message_list", "GET", "/inApps/v1/messaging/message/list"),
        ServerAPICall("configure_default_message", "PUT", "/inApps/v1/messaging/default/{productId}/{locale}", body: .json, [
            .path("productId", productID), .path("locale", .locale), .body("messageIdentifier", .uuid),
        ]),
        ServerAPICall("delete_default_message", "DELETE", "/inApps/v1/messaging/default/{productId}/{locale}",
                      [.path("productId", productID), .path("locale", .locale)]),
        ServerAPICall("get_default_message", "GET", "/inApps/v1/messaging/default/{productId}/{locale}",
                      [.path("productId", productID), .path("locale", .locale)]),
        ServerAPICall("configure_realtime_url", "PUT", "/inApps/v1/messaging/realtime/url", body: .json,
                      [.body("realtimeURL", .httpsURL, required: true)]),
        ServerAPICall("delete_realtime_url", "DELETE", "/inApps/v1/messaging/realtime/url"),
        ServerAPICall("get_realtime_url", "GET", "/inApps/v1/messaging/realtime/url"),
        ServerAPICall("initiate_performance_test", "POST", "/inApps/v1/messaging/performanceTest", body: .json,
                      [.body("originalTransactionId", .transactionID, required: true)]),
        ServerAPICall("get_performance_test_results", "GET", "/inApps/v1/messaging/performanceTest/result/{requestId}",
                      [.path("requestId", .identifier(maxLength: maxIdentifierBytes))]),
    ]

}

/// The checks of a call that look at several arguments at once.
enum ServerAPICrossCheck: Sendable {
    case none
    /// `startDate` not after `endDate`, where both are given.
    case startBeforeEnd
    /// As startBeforeEnd; a subtype only with a type; a type or a transaction id, not both.
    case notificationFilters

    func check(_ arguments: [String: JSONValue]) throws(ReceiptError) {
        guard self != .none else { return }
        if let start = arguments["startDate"]?.int64Value, let end = arguments["endDate"]?.int64Value, start > end {
            throw ReceiptError(.invalidArgument, "startDate \(start) is after endDate \(end) (START_DATE_AFTER_END_DATE)")
        }
        guard self == .notificationFilters else { return }
        if arguments["notificationSubtype"] != nil, arguments["notificationType"] == nil {
            throw ReceiptError(.invalidArgument, "notificationSubtype needs a notificationType")
        }
        if arguments["notificationType"] != nil, arguments["transactionId"] != nil {
            throw ReceiptError(.invalidArgument, "notificationType and transactionId are two filters; "
                               + "Apple takes one (MULTIPLE_FILTERS_SUPPLIED)")
        }
    }
}
