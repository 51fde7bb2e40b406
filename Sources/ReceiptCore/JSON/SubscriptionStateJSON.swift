/// A subscription's state as `receipt serve` answers `GET /v1/subscriptions/{id}`:
/// shaped like an item of Apple's Get All Subscription Statuses (`originalTransactionId`,
/// `status`, `signedTransactionInfo`, `signedRenewalInfo`), with each signed member's
/// payload beside it under its snake-case name (`transaction_info`, `renewal_info`,
/// as the App Store Server API tier adds them), and what the state adds:
/// `status_name`, `entitled`, `at_ms`, `transaction_count`, `pending_renewal_info`
/// in verifyReceipt's shape, `previous_original_transaction_id` when the subscription
/// replaced another, and for a revoked latest period `revocation_type`,
/// `refunded_share_milliunits` and `refunded_quantity`.
public enum SubscriptionStateJSON {
    /// `signedMembers` false leaves out `signedTransactionInfo` and `signedRenewalInfo` (an
    /// event's state, whose notification carries the signed rows: a few kilobytes less each).
    public static func render(_ state: SubscriptionState, indent: Int? = nil, signedMembers: Bool = true) -> [UInt8] {
        // Most of the answer is the signed members and their payloads: reserved at once,
        // the buffer is not grown (a large allocation and a copy each time) as it fills.
        let signed = [state.latestTransaction, state.renewalInfo].compactMap { $0 }
        let expected = signed.reduce(1024) { $0 + $1.compactSerialization.utf8.count + $1.payloadBytes.count }
        var writer = JSONWriter(indent: indent, capacity: expected)
        writer.beginObject()
        writer.string("originalTransactionId", state.originalTransactionID)
        writer.number("status", state.status.rawValue)
        writer.string("status_name", state.status.name)
        writer.bool("entitled", state.isEntitled)
        writer.number("at_ms", state.at)
        writer.number("transaction_count", Int64(state.transactions.count))
        ifPresent(state.previousOriginalTransactionID) { writer.string("previous_original_transaction_id", $0) }
        // A revoked subscription: how (refund, prorated refund, Family Sharing) and how much.
        if let facts = PurchaseFacts(transaction: state.latestTransaction) {
            EntitlementsJSON.writeRevocation(of: facts, into: &writer)
        }
        if signedMembers { writer.string("signedTransactionInfo", state.latestTransaction.compactSerialization) }
        writer.raw("transaction_info", state.latestTransaction.payloadBytes)
        if let renewal = state.renewalInfo {
            if signedMembers { writer.string("signedRenewalInfo", renewal.compactSerialization) }
            writer.raw("renewal_info", renewal.payloadBytes)
            writer.beginArray("pending_renewal_info")
            PendingRenewalInfoJSON.write(renewal, into: &writer)
            writer.endArray()
        }
        writer.endObject()
        return writer.bytes
    }
}
