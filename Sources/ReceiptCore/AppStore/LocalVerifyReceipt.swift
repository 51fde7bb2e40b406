/// The answer the App Store's verifyReceipt would give for a receipt, produced
/// locally: for servers moving off the deprecated endpoint that still consume its JSON.
///
/// What a receipt cannot tell, and so is never written: renewals that happened
/// after the receipt was issued (the App Store would list them in
/// latest_receipt_info), `pending_renewal_info` (renewal intent lives only on
/// Apple's servers), `request_date`, and the entries' `subscription_group_identifier`
/// and `cancellation_reason`.
public enum LocalVerifyReceipt {
    /// Statuses as the App Store returns them (SPEC §5).
    public static let malformed: Int64 = 21002
    public static let notAuthenticated: Int64 = 21003
    public static let sandboxReceiptSentToProduction: Int64 = 21007
    public static let productionReceiptSentToSandbox: Int64 = 21008

    /// `expecting` is the environment the caller plays: .production answers 21007
    /// for a sandbox receipt, as Apple's production endpoint does, and the reverse.
    public static func response(for input: [UInt8], verifier: ReceiptVerifier, expecting environment: AppStoreEnvironment,
                                indent: Int? = nil) -> String {
        answer(for: input, verifier: verifier, expecting: environment, indent: indent).json
    }

    /// The same response, and why the input could not be read when it is 21002
    /// (the App Store says no more; a local caller can say what is wrong).
    public static func answer(for input: [UInt8], verifier: ReceiptVerifier, expecting environment: AppStoreEnvironment,
                              indent: Int? = nil) -> (json: String, unreadable: ReceiptError?) {
        var writer = JSONWriter(indent: indent)
        writer.beginObject()
        let unreadable = writeMembers(for: input, verifier: verifier, expecting: environment, into: &writer)
        writer.endObject()
        return (writer.string, unreadable)
    }

    private static func writeMembers(for input: [UInt8], verifier: ReceiptVerifier, expecting environment: AppStoreEnvironment,
                                     into writer: inout JSONWriter) -> ReceiptError? {
        let receipt: Receipt
        do throws(ReceiptError) {
            receipt = try Receipt.parse(input)
        } catch {
            writer.number("status", malformed)
            return error
        }
        let receiptEnvironment = AppStoreEnvironment(receiptType: receipt.receiptType)
        if environment == .production && receiptEnvironment == .sandbox {
            writer.number("status", sandboxReceiptSentToProduction)
            return nil
        }
        if environment == .sandbox && receiptEnvironment == .production {
            writer.number("status", productionReceiptSentToSandbox)
            return nil
        }
        guard verifier.verify(receipt).isValid else {
            writer.number("status", notAuthenticated)
            return nil
        }
        writer.number("status", 0)
        writer.string("environment", environment.rawValue)
        AppStoreReceiptJSON.write(receipt, key: "receipt", into: &writer)
        writer.beginArray("latest_receipt_info")
        for purchase in latestReceiptInfoOrder(receipt) { AppStoreReceiptJSON.write(purchase, key: nil, into: &writer) }
        writer.endArray()
        writer.string("latest_receipt", Base64.encode(receipt.storage.encoded))
        return nil
    }

    /// The App Store lists latest_receipt_info oldest purchase first.
    static func latestReceiptInfoOrder(_ receipt: Receipt) -> [InAppPurchase] {
        receipt.purchases.enumerated().sorted { left, right in
            let (a, b) = (left.element.purchaseDate?.millisecondsSince1970 ?? .min,
                          right.element.purchaseDate?.millisecondsSince1970 ?? .min)
            return a != b ? a < b : left.offset < right.offset
        }.map(\.element)
    }
}
