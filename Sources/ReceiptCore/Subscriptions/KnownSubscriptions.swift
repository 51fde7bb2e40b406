/// What a store knows of some subscriptions, as verified payloads: signed
/// transactions and renewal infos that arrived after a receipt (notifications, the
/// App Store Server API). verifyReceipt's answer merges them (LocalVerifyReceipt);
/// payloads of subscriptions the receipt does not hold are ignored there.
public struct KnownSubscriptions: Sendable {
    public var transactions: [SignedPayload]
    public var renewalInfos: [SignedPayload]

    public init(transactions: [SignedPayload] = [], renewalInfos: [SignedPayload] = []) {
        self.transactions = transactions.filter { $0.kind == .transaction }
        self.renewalInfos = renewalInfos.filter { $0.kind == .renewalInfo }
    }

    /// Only what belongs to `originalTransactionIDs`, one transaction per id (its
    /// latest signing) and one renewal info per subscription (its latest signing).
    func restricted(to originalTransactionIDs: Set<String>) -> KnownSubscriptions {
        let belongs = { (payload: SignedPayload) in payload.originalTransactionID.map(originalTransactionIDs.contains) ?? false }
        return KnownSubscriptions(transactions: SubscriptionState.latestSigning(transactions.filter(belongs)),
                                  renewalInfos: SubscriptionState.latestSigning(renewalInfos.filter(belongs), per: \.originalTransactionID))
    }

    func renewalInfo(of originalTransactionID: String) -> SignedPayload? {
        renewalInfos.first { $0.originalTransactionID == originalTransactionID }
    }
}
