/// Entitlements as JSON, for the C ABI, Python and the CLI, and product catalogs
/// from JSON: {"kinds": {"id": "consumable" | "non_consumable" | "auto_renewable" |
/// "non_renewing"}, "non_renewing_durations_ms": {"id": milliseconds}}.
public enum EntitlementsJSON {
    /// `states`: the subscriptions' states from their renewal infos too (SubscriptionState),
    /// written as `subscription_states` when given: a subscription in its grace period is
    /// entitled there while its last period, which is all the entitlements engine sees, has ended.
    /// `nextCursor`: where the next page of a paged answer starts (`next_cursor`), when one follows.
    public static func render(_ entitlements: Entitlements, states: [SubscriptionState] = [], nextCursor: String? = nil,
                              indent: Int? = nil) -> String {
        var writer = JSONWriter(indent: indent)
        writer.beginObject()
        writer.number("at_ms", entitlements.at)
        writer.beginArray("active_product_ids")
        for id in entitlements.activeProductIDs.sorted() { writer.string(nil, id) }
        writer.endArray()
        writer.beginArray("purchases")
        for status in entitlements.purchases { write(status, into: &writer) }
        writer.endArray()
        writer.beginArray("subscriptions")
        for subscription in entitlements.subscriptions {
            writer.beginObject()
            writer.string("original_transaction_id", subscription.originalTransactionID)
            ifPresent(subscription.productID) { writer.string("product_id", $0) }
            writer.bool("active", subscription.isActive)
            writer.bool("in_grace_period", subscription.isInGracePeriod)
            ifPresent(subscription.expiresAt) { writer.number("expires_at_ms", $0) }
            writer.bool("is_trial_period", subscription.isInTrialPeriod)
            writer.bool("is_in_intro_offer_period", subscription.isInIntroOfferPeriod)
            writer.number("periods", Int64(subscription.periods.count))
            ifPresent(subscription.previousOriginalTransactionID) { writer.string("previous_original_transaction_id", $0) }
            writer.endObject()
        }
        writer.endArray()
        writer.beginObject("consumable_quantities")
        for (id, quantity) in entitlements.consumableQuantities.sorted(by: { $0.key < $1.key }) { writer.number(id, quantity) }
        writer.endObject()
        writer.beginArray("trial_or_intro_offer_used")
        for id in entitlements.productsWithTrialOrIntroOfferUsed.sorted() { writer.string(nil, id) }
        writer.endArray()
        if !states.isEmpty {
            writer.beginArray("subscription_states")
            for state in states {
                writer.beginObject()
                writer.string("original_transaction_id", state.originalTransactionID)
                ifPresent(state.latestTransaction.productID) { writer.string("product_id", $0) }
                writer.number("status", state.status.rawValue)
                writer.string("status_name", state.status.name)
                writer.bool("entitled", state.isEntitled)
                writer.endObject()
            }
            writer.endArray()
        }
        if let nextCursor { writer.string("next_cursor", nextCursor) }
        writer.endObject()
        return writer.string
    }

    private static func write(_ status: PurchaseStatus, into writer: inout JSONWriter) {
        writer.beginObject()
        ifPresent(status.purchase.productID) { writer.string("product_id", $0) }
        ifPresent(status.purchase.transactionID) { writer.string("transaction_id", $0) }
        ifPresent(status.purchase.originalTransactionID) { writer.string("original_transaction_id", $0) }
        if let kind = status.kind { writer.string("kind", kind.rawValue) } else { writer.null("kind") }
        writer.bool("active", status.isActive)
        if let reason = status.inactiveReason { writer.string("inactive_reason", reason.rawValue) }
        if status.inGracePeriod { writer.bool("in_grace_period", true) }
        ifPresent(status.purchase.purchaseDate) { writer.number("purchase_date_ms", $0) }
        ifPresent(status.endsAt) { writer.number("ends_at_ms", $0) }
        ifPresent(status.purchase.quantity) { writer.number("quantity", $0) }
        writeRevocation(of: status.purchase, into: &writer)
        writer.string("source", status.purchase.source.rawValue)
        writer.endObject()
    }


    /// How much of a refunded or revoked purchase went back: Apple's `revocationType`, the
    /// share in milliunits (for revenue figures) and the units. Nothing for a purchase not revoked.
    static func writeRevocation(of purchase: PurchaseFacts, into writer: inout JSONWriter) {
        guard purchase.isCancelled else { return }
        ifPresent(purchase.revocationType) { writer.string("revocation_type", $0) }
        writer.number("refunded_share_milliunits", purchase.refundedShare)
        writer.number("refunded_quantity", purchase.refundedQuantity)
    }

    public static func catalog(_ text: String) throws(ReceiptError) -> ProductCatalog {
        let document = try JSONValue.parse(text)
        guard case .object(let members) = document else { throw ReceiptError(.badJSON, "a catalog is a JSON object") }
        // A misspelt or mistyped key would silently leave products unknown: refuse it.
        for (key, _) in members where key != "kinds" && key != "non_renewing_durations_ms" {
            throw ReceiptError(.badJSON, "catalog key \"\(key)\" is not kinds or non_renewing_durations_ms")
        }
        var catalog = ProductCatalog()
        for (id, value) in try object(document["kinds"], "kinds") {
            guard let name = value.stringValue, let kind = ProductKind(rawValue: name) else {
                throw ReceiptError(.badJSON, "catalog kind of \(id) is not one of "
                                   + ProductKind.allCases.map(\.rawValue).joined(separator: ", "))
            }
            catalog.kinds[id] = kind
        }
        for (id, value) in try object(document["non_renewing_durations_ms"], "non_renewing_durations_ms") {
            guard let milliseconds = value.int64Value, milliseconds > 0 else {
                throw ReceiptError(.badJSON, "catalog duration of \(id) is not a positive number of milliseconds")
            }
            catalog.nonRenewingDurations[id] = milliseconds
        }
        return catalog
    }

    private static func object(_ value: JSONValue?, _ key: String) throws(ReceiptError) -> [String: JSONValue] {
        guard let value else { return [:] }
        guard case .object(let members) = value else { throw ReceiptError(.badJSON, "catalog \(key) is not an object") }
        return members
    }
}
