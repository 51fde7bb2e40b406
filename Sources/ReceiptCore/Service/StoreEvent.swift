/// One change a store accepted, as `receipt serve` hands it on: written to the store's
/// outbox in the same transaction as the change, then delivered to webhooks (signed
/// with StandardWebhook) and listed by `receipt events`. The body is JSON in the shape
/// the Standard Webhooks specification suggests: `{"type", "timestamp", "data"}`; `data`
/// holds the ids, the environment, the subscription's state and a summary of the entitlements
/// *after* the change, and the JWS it came from, so that a receiver can verify them itself.
/// Its size does not grow with the subscription's or the account's history.
public struct StoreEvent: Sendable {
    /// `evt_` + a random UUID: the Standard Webhooks `webhook-id`, on which receivers de-duplicate.
    public let id: String
    public let type: String
    public let createdAt: Int64
    /// Events with one key are delivered in the order they were made: the original
    /// transaction id, else (a withdrawal of consent) the app transaction id, else the notification's UUID.
    public let orderingKey: String
    public let body: [UInt8]

    /// What made the change.
    public enum Cause: Sendable {
        /// A verified notification (its rows, its JWS).
        case notification(ReceivedNotification)
        /// Rows learnt from the App Store Server API (a look-up, `receipt sync`).
        case serverAPI(transaction: StoredTransaction?, renewalInfo: StoredRenewalInfo?)
    }

    /// What the store holds after the change, as it reads it back in the change's transaction.
    public struct After: Sendable {
        /// The subscription's latest transactions and its renewal info (JWS).
        public var subscriptionTransactions: [String] = []
        public var renewalInfo: String?
        /// The account's transactions (its app account token's latest page) and their renewal
        /// infos, when the change names an app account token; nil otherwise.
        public var accountTransactions: [String]?
        public var accountRenewalInfos: [String] = []

        public init() {}
    }

    public init(id: String, type: String, createdAt: Int64, orderingKey: String, body: [UInt8]) {
        self.id = id
        self.type = type
        self.createdAt = createdAt
        self.orderingKey = orderingKey
        self.body = body
    }

    /// The event of a change: `cause`, and the store `after` it, at `now`.
    public static func make(_ cause: Cause, after: After, at now: Int64) throws(ReceiptError) -> StoreEvent {
        let id = "evt_" + (try RandomUUID.make()).replacingDashes
        // Each stored JWS decoded once for the process (StoredPayloadCache): the subscription's
        // transactions are among the account's too, and most were read by its previous event.
        let decodedOne = StoredPayloadCache.decoded
        let decoded = { (tokens: [String]) in tokens.compactMap(decodedOne) }
        let transactions = decoded(after.subscriptionTransactions)
        let renewal = after.renewalInfo.flatMap(decodedOne)
        let carried: (transaction: StoredTransaction?, renewal: StoredRenewalInfo?)
        let type: String
        var writer = JSONWriter()
        switch cause {
        case .notification(let notification):
            carried = (notification.transaction, notification.renewalInfo)
            type = StoreEventType.of(notificationType: notification.notificationType, subtype: notification.subtype)
        case .serverAPI(let transaction, let renewalInfo):
            carried = (transaction, renewalInfo)
            type = StoreEventType.updated
        }
        let originalTransactionID = carried.transaction?.originalTransactionID ?? carried.renewal?.originalTransactionID
        let state = originalTransactionID.flatMap {
            SubscriptionState(originalTransactionID: $0, transactions: transactions, renewalInfo: renewal, at: now)
        }
        let latest = carried.transaction.flatMap { decodedOne($0.jws) } ?? state?.latestTransaction
        writer.beginObject()
        writer.string("type", type)
        writer.string("timestamp", RFC3339Format.utc(now))
        writer.beginObject("data")
        writer.string("event_id", id)
        writer.number("created_at_ms", now)
        var orderingKey = originalTransactionID
        switch cause {
        case .notification(let notification):
            writer.string("source", "notification")
            writer.string("notification_type", notification.notificationType)
            ifPresent(notification.subtype) { writer.string("subtype", $0) }
            writer.string("notification_uuid", notification.notificationUUID)
            ifPresent(notification.environment) { writer.string("environment", $0) }
            if let rescission = notification.consentRescission {
                writer.string("app_transaction_id", rescission.appTransactionID)
                writer.string("signed_app_transaction_info", rescission.jws)
                orderingKey = orderingKey ?? rescission.appTransactionID
            }
            // A refund request asks for an answer within 12 hours: where the app gives it (`receipt serve`).
            if notification.notificationType == "CONSUMPTION_REQUEST", let transaction = notification.transaction {
                writer.string("answer_path", "/v1/consumption/" + transaction.transactionID)
            }
            writer.string("signed_payload", notification.signedPayload)
            orderingKey = orderingKey ?? notification.notificationUUID
        case .serverAPI:
            writer.string("source", "app_store_server_api")
            ifPresent(latest?.environmentName) { writer.string("environment", $0) }
        }
        ifPresent(originalTransactionID) { writer.string("original_transaction_id", $0) }
        ifPresent(latest?.transactionID) { writer.string("transaction_id", $0) }
        ifPresent(latest?.string("appAccountToken")?.lowercased()) { writer.string("app_account_token", $0) }
        ifPresent(latest?.productID) { writer.string("product_id", $0) }
        // A notification's own rows are inside its signed_payload; rows learnt from the API stand alone.
        if case .serverAPI = cause {
            ifPresent(carried.transaction?.jws) { writer.string("signed_transaction_info", $0) }
            ifPresent(carried.renewal?.jws) { writer.string("signed_renewal_info", $0) }
        }
        // The state's signed rows are the notification's (signed_payload) or beside it (signed_transaction_info):
        // its payloads alone here, so that an event stays a few kilobytes whatever the subscription's history.
        if let state { writer.raw("state", SubscriptionStateJSON.render(state, signedMembers: false)) } else { writer.null("state") }
        if let account = after.accountTransactions {
            writer.string("entitlements_of", "app_account_token")
            writer.raw("entitlements", try AccountEntitlementsJSON.summary(
                transactions: decoded(account), renewalInfos: decoded(after.accountRenewalInfos), at: now))
        } else if !transactions.isEmpty {
            writer.string("entitlements_of", "original_transaction_id")
            writer.raw("entitlements", try AccountEntitlementsJSON.summary(
                transactions: transactions, renewalInfos: renewal.map { [$0] } ?? [], at: now))
        }
        writer.endObject()
        writer.endObject()
        return StoreEvent(id: id, type: type, createdAt: now, orderingKey: orderingKey ?? id, body: writer.bytes)
    }
}

extension String {
    /// A UUID's hex digits alone: ids that read as one word.
    var replacingDashes: String { String(unicodeScalars.filter { $0 != "-" }) }
}
