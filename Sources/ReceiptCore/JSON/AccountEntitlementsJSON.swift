/// What an account's stored transactions and its subscriptions' renewal infos entitle
/// it to at an instant, as `GET /v1/entitlements` answers and an event carries it: the
/// entitlements engine over all of them (the renewal infos name grace periods, in
/// which a customer is entitled in both halves of the answer) and each subscription's state.
public enum AccountEntitlementsJSON {
    public static func render(transactions: [SignedPayload], renewalInfos: [SignedPayload], at instant: Int64,
                              nextCursor: String? = nil) throws(ReceiptError) -> [UInt8] {
        let entitlements = try Entitlements.ofUnverified(payloads: transactions + renewalInfos, at: instant)
        let states = entitlements.subscriptions.compactMap { subscription in
            SubscriptionState(originalTransactionID: subscription.originalTransactionID, transactions: transactions,
                              renewalInfo: renewalInfos.first { $0.originalTransactionID == subscription.originalTransactionID },
                              at: instant)
        }
        return Array(EntitlementsJSON.render(entitlements, states: states, nextCursor: nextCursor).utf8)
    }

    /// The most products and subscriptions a summary lists.
    public static let summaryLimit = 20

    /// What an event carries of an account's or a subscription's entitlements: the products
    /// active now and each subscription's standing (product, status, entitled, expiry), at
    /// most `summaryLimit` of each (`truncated` true past it), with no signed transaction in
    /// it (those are a GET of /v1/entitlements away): a few kilobytes whatever the history.
    public static func summary(transactions: [SignedPayload], renewalInfos: [SignedPayload], at instant: Int64)
        throws(ReceiptError) -> [UInt8] {
        let entitlements = try Entitlements.ofUnverified(payloads: transactions + renewalInfos, at: instant)
        let active = entitlements.activeProductIDs.sorted()
        let subscriptions = entitlements.subscriptions.prefix(summaryLimit)
        var writer = JSONWriter()
        writer.beginObject()
        writer.number("at_ms", instant)
        writer.beginArray("active_product_ids")
        for id in active.prefix(summaryLimit) { writer.string(nil, id) }
        writer.endArray()
        writer.beginArray("subscriptions")
        for subscription in subscriptions {
            writer.beginObject()
            writer.string("original_transaction_id", subscription.originalTransactionID)
            ifPresent(subscription.productID) { writer.string("product_id", $0) }
            if let state = SubscriptionState(originalTransactionID: subscription.originalTransactionID, transactions: transactions,
                                             renewalInfo: renewalInfos.first { $0.originalTransactionID == subscription.originalTransactionID },
                                             at: instant) {
                writer.string("status_name", state.status.name)
                writer.bool("entitled", state.isEntitled)
            }
            ifPresent(subscription.expiresAt) { writer.number("expires_at_ms", $0) }
            writer.endObject()
        }
        writer.endArray()
        writer.bool("truncated", active.count > summaryLimit || entitlements.subscriptions.count > summaryLimit)
        writer.endObject()
        return writer.bytes
    }
}
