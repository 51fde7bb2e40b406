/// Apple's answer models, by call (the response classes of Apple's App Store
/// Server Library and the App Store Server API documentation). A call not named
/// here answers with no body (set_app_account_token, send_consumption_data,
/// delete_image…): whatever members such an answer has are dropped.
extension ServerAPICall {
    /// The model `ServerAPIAnswerReader` reads this call's answers through.
    var answerModel: ServerAPIAnswerShape { Self.answerModels[name] ?? .empty }

    private typealias Member = ServerAPIAnswerMember

    /// SendAttemptItem: one try of Apple's to send a notification.
    private static let sendAttempts = Member("sendAttemptResults", .list(.object([
        Member("attemptDate", .integer), Member("sendAttemptResult", .string),
    ])))

    /// HistoryResponse and RefundHistoryResponse: a page of signed transactions.
    private static let transactionPage: [Member] = [
        Member("revision", .string), Member("hasMore", .bool), Member("bundleId", .string),
        Member("appAppleId", .integer), Member("environment", .string),
        Member("signedTransactions", .list(.signed(.transaction)), required: true),
    ]

    /// PerformanceTestConfig.
    private static let performanceTestConfig = Member("config", .object([
        Member("maxConcurrentRequests", .integer), Member("totalRequests", .integer), Member("totalDuration", .integer),
        Member("responseTimeThreshold", .integer), Member("successRateThreshold", .integer),
    ]))

    /// The Advanced Commerce API's answers: the transaction and, for a subscription, its renewal info after the change.
    private static let advancedCommerceAnswer: ServerAPIAnswerShape = .object([
        Member("signedTransactionInfo", .signed(.transaction), required: true),
        Member("signedRenewalInfo", .signed(.renewalInfo)),
    ])

    static let answerModels: [String: ServerAPIAnswerShape] = [
        "get_transaction_info": .object([
            Member("signedTransactionInfo", .signed(.transaction, sameTransactionAs: "transactionId"), required: true),
        ]),
        "get_transaction_history": .object(transactionPage),
        "cancel_subscription": advancedCommerceAnswer, "revoke_subscription": advancedCommerceAnswer,
        "request_transaction_refund": advancedCommerceAnswer, "change_subscription_metadata": advancedCommerceAnswer,
        "change_subscription_price": advancedCommerceAnswer, "migrate_subscription": advancedCommerceAnswer,
        "get_refund_history": .object(transactionPage),
        // OrderLookupResponse: status 1 (invalid order id) comes with no transactions.
        "look_up_order_id": .object([
            Member("status", .integer, required: true), Member("signedTransactions", .list(.signed(.transaction))),
        ]),
        "get_app_transaction_info": .object([
            Member("signedAppTransactionInfo", .signed(.appTransaction), required: true),
        ]),
        // StatusResponse → SubscriptionGroupIdentifierItem → LastTransactionsItem.
        "get_all_subscription_statuses": .object([
            Member("environment", .string), Member("bundleId", .string), Member("appAppleId", .integer),
            Member("data", .list(.object([
                Member("subscriptionGroupIdentifier", .string),
                Member("lastTransactions", .list(.object([
                    Member("status", .integer), Member("originalTransactionId", .string),
                    Member("signedTransactionInfo", .signed(.transaction), required: true),
                    Member("signedRenewalInfo", .signed(.renewalInfo), required: true),
                ])), required: true),
            ])), required: true),
        ]),
        "extend_subscription_renewal_date": .object([
            Member("originalTransactionId", .string), Member("webOrderLineItemId", .string), Member("success", .bool),
            Member("effectiveDate", .integer),
        ]),
        "extend_renewal_date_for_all_active_subscribers": .object([Member("requestIdentifier", .string)]),
        "get_status_of_subscription_renewal_date_extensions": .object([
            Member("requestIdentifier", .string), Member("complete", .bool), Member("completeDate", .integer),
            Member("succeededCount", .integer), Member("failedCount", .integer),
        ]),
        "get_notification_history": .object([
            Member("paginationToken", .string), Member("hasMore", .bool),
            Member("notificationHistory", .list(.object([
                Member("signedPayload", .signed(.notification), required: true), sendAttempts,
                Member("firstSendAttemptResult", .string),
            ])), required: true),
        ]),
        "request_test_notification": .object([Member("testNotificationToken", .string, required: true)]),
        "get_test_notification_status": .object([
            Member("signedPayload", .signed(.notification), required: true), sendAttempts,
            Member("firstSendAttemptResult", .string),
        ]),
        "get_image_list": .object([Member("imageIdentifiers", .list(.object([
            Member("imageIdentifier", .string), Member("imageState", .string),
        ])))]),
        "get_message_list": .object([Member("messageIdentifiers", .list(.object([
            Member("messageIdentifier", .string), Member("messageState", .string),
        ])))]),
        "get_default_message": .object([Member("messageIdentifier", .string)]),
        "get_realtime_url": .object([Member("realtimeURL", .string)]),
        "initiate_performance_test": .object([performanceTestConfig, Member("requestId", .string)]),
        "get_performance_test_results": .object([
            performanceTestConfig, Member("target", .string), Member("result", .string),
            Member("successRate", .integer), Member("numPending", .integer),
            Member("responseTimes", .map(.integer)), Member("failures", .map(.integer)),
        ]),
    ]
}
