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
}
