import ReceiptCore

/// The calls under the names and labels of Apple's Swift library
/// (app-store-server-library-swift). Request bodies and filters are Apple's
/// members as JSON (`["sort": "ASCENDING"]`); ReceiptCore checks them before
/// anything is sent. Each returns Apple's answer with the verified payloads beside
/// the signed members (ServerAPIAnswer).
extension AppStoreServerAPIClient {
    public func extendRenewalDateForAllActiveSubscribers(massExtendRenewalDateRequest: [String: JSONValue]) async throws -> JSONValue {
        try await call("extend_renewal_date_for_all_active_subscribers", massExtendRenewalDateRequest)
    }

    public func extendSubscriptionRenewalDate(originalTransactionId: String,
                                              extendRenewalDateRequest: [String: JSONValue]) async throws -> JSONValue {
        try await call("extend_subscription_renewal_date",
                       extendRenewalDateRequest.merging(["originalTransactionId": .string(originalTransactionId)]) { $1 })
    }

    public func getAllSubscriptionStatuses(transactionId: String, status: [Int]? = nil) async throws -> JSONValue {
        var arguments: [String: JSONValue] = ["transactionId": .string(transactionId)]
        if let status { arguments["status"] = .array(status.map { .number(String($0)) }) }
        return try await call("get_all_subscription_statuses", arguments)
    }

    public func getRefundHistory(transactionId: String, revision: String?) async throws -> JSONValue {
        try await call("get_refund_history", ["transactionId": .string(transactionId), "revision": revision.map(JSONValue.string) ?? .null])
    }

    public func getStatusOfSubscriptionRenewalDateExtensions(requestIdentifier: String, productId: String) async throws -> JSONValue {
        try await call("get_status_of_subscription_renewal_date_extensions",
                       ["requestIdentifier": .string(requestIdentifier), "productId": .string(productId)])
    }

    public func getTestNotificationStatus(testNotificationToken: String) async throws -> JSONValue {
        try await call("get_test_notification_status", ["testNotificationToken": .string(testNotificationToken)])
    }

    /// `transactionHistoryRequest` uses the query's names (`productId`, `productType`, `subscriptionGroupIdentifier`).
    public func getTransactionHistory(transactionId: String, revision: String?, transactionHistoryRequest: [String: JSONValue] = [:],
                                      version: String = "v2") async throws -> JSONValue {
        try await call("get_transaction_history", transactionHistoryRequest.merging(
            ["transactionId": .string(transactionId), "revision": revision.map(JSONValue.string) ?? .null,
             "version": .string(version)]) { $1 })
    }

    public func getTransactionInfo(transactionId: String) async throws -> JSONValue {
        try await call("get_transaction_info", ["transactionId": .string(transactionId)])
    }

    public func lookUpOrderId(orderId: String) async throws -> JSONValue {
        try await call("look_up_order_id", ["orderId": .string(orderId)])
    }

    public func requestTestNotification() async throws -> JSONValue {
        try await call("request_test_notification")
    }

    public func getNotificationHistory(paginationToken: String?, notificationHistoryRequest: [String: JSONValue]) async throws -> JSONValue {
        try await call("get_notification_history", notificationHistoryRequest.merging(
            ["paginationToken": paginationToken.map(JSONValue.string) ?? .null]) { $1 })
    }

    public func sendConsumptionData(transactionId: String, consumptionRequest: [String: JSONValue]) async throws {
        _ = try await call("send_consumption_data", consumptionRequest.merging(["transactionId": .string(transactionId)]) { $1 })
    }

    public func sendConsumptionInformation(transactionId: String, consumptionRequest: [String: JSONValue]) async throws {
        _ = try await call("send_consumption_information",
                           consumptionRequest.merging(["transactionId": .string(transactionId)]) { $1 })
    }

    public func setAppAccountToken(originalTransactionId: String, updateAppAccountTokenRequest: [String: JSONValue]) async throws {
        _ = try await call("set_app_account_token", updateAppAccountTokenRequest.merging(
            ["originalTransactionId": .string(originalTransactionId)]) { $1 })
    }

    /// `image`: the PNG file's bytes.
    public func uploadImage(imageIdentifier: String, image: [UInt8], imageSize: String? = nil) async throws {
        _ = try await call("upload_image", ["imageIdentifier": .string(imageIdentifier),
                                            "image": .string(ServerAPIArguments.base64(image)),
                                            "imageSize": imageSize.map(JSONValue.string) ?? .null])
    }

    public func deleteImage(imageIdentifier: String) async throws {
        _ = try await call("delete_image", ["imageIdentifier": .string(imageIdentifier)])
    }

    public func getImageList() async throws -> JSONValue { try await call("get_image_list") }

    public func uploadMessage(messageIdentifier: String, uploadMessageRequestBody: [String: JSONValue]) async throws {
        _ = try await call("upload_message", uploadMessageRequestBody.merging(["messageIdentifier": .string(messageIdentifier)]) { $1 })
    }

    public func deleteMessage(messageIdentifier: String) async throws {
        _ = try await call("delete_message", ["messageIdentifier": .string(messageIdentifier)])
    }

    public func getMessageList() async throws -> JSONValue { try await call("get_message_list") }

    public func configureDefaultMessage(productId: String, locale: String,
                                        defaultConfigurationRequest: [String: JSONValue]) async throws {
        _ = try await call("configure_default_message", defaultConfigurationRequest.merging(
            ["productId": .string(productId), "locale": .string(locale)]) { $1 })
    }

    public func deleteDefaultMessage(productId: String, locale: String) async throws {
        _ = try await call("delete_default_message", ["productId": .string(productId), "locale": .string(locale)])
    }

    public func getDefaultMessage(productId: String, locale: String) async throws -> JSONValue {
        try await call("get_default_message", ["productId": .string(productId), "locale": .string(locale)])
    }

    public func configureRealtimeUrl(realtimeUrlRequest: [String: JSONValue]) async throws {
        _ = try await call("configure_realtime_url", realtimeUrlRequest)
    }

    public func deleteRealtimeUrl() async throws { _ = try await call("delete_realtime_url") }

    public func getRealtimeUrl() async throws -> JSONValue { try await call("get_realtime_url") }

    public func initiatePerformanceTest(performanceTestRequest: [String: JSONValue]) async throws -> JSONValue {
        try await call("initiate_performance_test", performanceTestRequest)
    }

    public func getPerformanceTestResults(requestId: String) async throws -> JSONValue {
        try await call("get_performance_test_results", ["requestId": .string(requestId)])
    }

    public func getAppTransactionInfo(transactionId: String) async throws -> JSONValue {
        try await call("get_app_transaction_info", ["transactionId": .string(transactionId)])
    }

    public func finishTransaction(transactionId: String) async throws {
        _ = try await call("finish_transaction", ["transactionId": .string(transactionId)])
    }

    // The Advanced Commerce API: `request` is Apple's request body (requestInfo and the call's members).

    public func cancelSubscription(transactionId: String, request: [String: JSONValue]) async throws -> JSONValue {
        try await advancedCommerce("cancel_subscription", transactionId, request)
    }

    public func revokeSubscription(transactionId: String, request: [String: JSONValue]) async throws -> JSONValue {
        try await advancedCommerce("revoke_subscription", transactionId, request)
    }

    public func requestTransactionRefund(transactionId: String, request: [String: JSONValue]) async throws -> JSONValue {
        try await advancedCommerce("request_transaction_refund", transactionId, request)
    }

    public func changeSubscriptionMetadata(transactionId: String, request: [String: JSONValue]) async throws -> JSONValue {
        try await advancedCommerce("change_subscription_metadata", transactionId, request)
    }

    public func changeSubscriptionPrice(transactionId: String, request: [String: JSONValue]) async throws -> JSONValue {
        try await advancedCommerce("change_subscription_price", transactionId, request)
    }

    public func migrateSubscription(transactionId: String, request: [String: JSONValue]) async throws -> JSONValue {
        try await advancedCommerce("migrate_subscription", transactionId, request)
    }

    private func advancedCommerce(_ name: String, _ transactionId: String, _ request: [String: JSONValue]) async throws -> JSONValue {
        try await call(name, request.merging(["transactionId": .string(transactionId)]) { $1 })
    }
}
