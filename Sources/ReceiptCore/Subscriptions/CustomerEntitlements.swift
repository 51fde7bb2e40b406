/// Entitlements from one customer's signed payloads as they come: transactions and
/// notifications count as the transactions they carry, and renewal infos (alone, or in
/// notifications) name the billing grace periods in which Apple keeps a lapsed
/// subscription's access (SubscriptionState). So the entitlements engine and the
/// subscription state say the same of a customer in grace, whoever asks: the CLI,
/// the C ABI, Python and `receipt serve`.
extension Entitlements {
    /// Every verification must have passed, renewal infos' included: the first that did
    /// not throws its status. `names`: what errors call each payload, then the receipt.
    public static func of(payloads: [(SignedPayload, VerificationResult)], receipt: (Receipt, VerificationResult)? = nil,
                          at instant: Int64, catalog: ProductCatalog = ProductCatalog(),
                          names: [String] = []) throws(ReceiptError) -> Entitlements {
        for (index, (payload, verification)) in payloads.enumerated()
        where payload.kind == .renewalInfo && !verification.isValid {
            let name = names.indices.contains(index) ? names[index] : "signed renewal info \(index)"
            throw ReceiptError(verification.status, "entitlements of \(name) that did not verify (\(verification.status.name))")
        }
        let (transactions, transactionNames) = withoutRenewalInfos(payloads, names: names, kind: \.0.kind)
        return try of(transactions: transactions, receipt: receipt, at: instant, catalog: catalog,
                      names: transactionNames + receiptName(names, after: payloads.count),
                      gracePeriodEnds: SubscriptionState.gracePeriodEnds(payloads: payloads.map(\.0), at: instant))
    }

    /// The same without verification: only for payloads verified some other way.
    public static func ofUnverified(payloads: [SignedPayload], receipt: Receipt? = nil, at instant: Int64,
                                    catalog: ProductCatalog = ProductCatalog(),
                                    names: [String] = []) throws(ReceiptError) -> Entitlements {
        let (transactions, transactionNames) = withoutRenewalInfos(payloads, names: names, kind: \.kind)
        return try ofUnverified(transactions: transactions, receipt: receipt, at: instant, catalog: catalog,
                                names: transactionNames + receiptName(names, after: payloads.count),
                                gracePeriodEnds: SubscriptionState.gracePeriodEnds(payloads: payloads, at: instant))
    }

    /// The payloads that are not renewal infos, with their names (by index when none is given).
    private static func withoutRenewalInfos<Payload>(_ payloads: [Payload], names: [String],
                                                     kind: (Payload) -> SignedPayloadKind) -> ([Payload], [String]) {
        let kept = payloads.indices.filter { kind(payloads[$0]) != .renewalInfo }
        return (kept.map { payloads[$0] }, kept.map { names.indices.contains($0) ? names[$0] : "signed transaction \($0)" })
    }

    private static func receiptName(_ names: [String], after count: Int) -> [String] {
        names.indices.contains(count) ? [names[count]] : []
    }
}
