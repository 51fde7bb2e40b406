/// verifyReceipt's `latest_receipt_info`: the receipt's purchases and, when a store
/// knows more (KnownSubscriptions), the signed transactions of the receipt's
/// subscriptions, a signed one standing in for the receipt's entry of the same
/// transaction id (it is later news: a refund, say). Oldest purchase first, as the
/// App Store lists them.
enum LatestReceiptInfo {
    enum Entry {
        /// An index into the receipt's purchases.
        case receipt(Int)
        case signed(SignedPayload)
    }

    /// `excludeOldTransactions`: of each auto-renewable subscription (one original
    /// transaction id) only the last renewal stays; other purchases stay as they are.
    static func entries(_ purchases: [InAppPurchase], known: [SignedPayload], excludeOldTransactions: Bool) -> [Entry] {
        let knownIDs = Set(known.compactMap(\.transactionID))
        var items: [(entry: Entry, purchased: Int64, subscription: String?)] = []
        for (index, purchase) in purchases.enumerated() where !(purchase.transactionID.map(knownIDs.contains) ?? false) {
            items.append((.receipt(index), purchase.purchaseDate?.millisecondsSince1970 ?? .min,
                          LocalVerifyReceipt.isAutoRenewable(purchase) ? purchase.originalTransactionID ?? purchase.transactionID ?? "" : nil))
        }
        for transaction in known {
            items.append((.signed(transaction), transaction.date("purchaseDate") ?? .min,
                          transaction.originalTransactionID ?? transaction.transactionID ?? ""))
        }
        // Stable: equal dates keep the receipt's order, then the store's.
        let ordered = items.indices.sorted { items[$0].purchased != items[$1].purchased ? items[$0].purchased < items[$1].purchased : $0 < $1 }
        guard excludeOldTransactions else { return ordered.map { items[$0].entry } }
        var lastOfSubscription: [String: Int] = [:]
        for position in ordered { if let subscription = items[position].subscription { lastOfSubscription[subscription] = position } }
        return ordered.filter { position in
            items[position].subscription.map { lastOfSubscription[$0] == position } ?? true
        }.map { items[$0].entry }
    }
}
