/// The stable names of the events `receipt serve` hands on (webhooks, `receipt events`),
/// one per kind of change, from Apple's notification type and subtype. README lists
/// them; a name never changes meaning. Apple's type and subtype travel with every
/// event too, so a receiver that needs finer detail has it.
public enum StoreEventType {
    /// Changes learnt from the App Store Server API (a look-up, `receipt sync`), which
    /// come without a notification to say what happened.
    public static let updated = "subscription.updated"

    /// The event type of a notification of `type` and `subtype` (Apple's names).
    public static func of(notificationType type: String, subtype: String?) -> String {
        switch (type, subtype) {
        case ("SUBSCRIBED", "RESUBSCRIBE"): "subscription.resubscribed"
        case ("SUBSCRIBED", _): "subscription.started"
        case ("DID_RENEW", "BILLING_RECOVERY"): "subscription.billing_recovered"
        case ("DID_RENEW", _): "subscription.renewed"
        case ("DID_FAIL_TO_RENEW", "GRACE_PERIOD"): "subscription.grace_period_started"
        case ("DID_FAIL_TO_RENEW", _): "subscription.billing_retry_started"
        case ("GRACE_PERIOD_EXPIRED", _): "subscription.grace_period_expired"
        case ("EXPIRED", _): "subscription.expired"
        case ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED"): "subscription.auto_renew_enabled"
        case ("DID_CHANGE_RENEWAL_STATUS", _): "subscription.auto_renew_disabled"
        case ("DID_CHANGE_RENEWAL_PREF", "UPGRADE"): "subscription.upgraded"
        case ("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE"): "subscription.downgrade_scheduled"
        case ("DID_CHANGE_RENEWAL_PREF", _): "subscription.product_change_canceled"
        case ("OFFER_REDEEMED", _): "subscription.offer_redeemed"
        case ("PRICE_INCREASE", _): "subscription.price_increase"
        case ("RENEWAL_EXTENDED", _): "subscription.renewal_extended"
        case ("RENEWAL_EXTENSION", _): "subscription.renewal_extension"
        case ("METADATA_UPDATE", _): "subscription.metadata_updated"
        case ("MIGRATION", _): "subscription.migrated"
        case ("PRICE_CHANGE", _): "subscription.price_changed"
        case ("REFUND", _): "purchase.refunded"
        case ("REFUND_DECLINED", _): "purchase.refund_declined"
        case ("REFUND_REVERSED", _): "purchase.refund_reversed"
        case ("REVOKE", _): "purchase.revoked"
        case ("CONSUMPTION_REQUEST", _): "purchase.consumption_requested"
        case ("ONE_TIME_CHARGE", _): "purchase.one_time_charge"
        case ("EXTERNAL_PURCHASE_TOKEN", _): "external_purchase.token"
        case ("RESCIND_CONSENT", _): "consent.rescinded"
        case ("TEST", _): "test"
        // A type Apple adds later: named after it, so that it is delivered, not lost.
        default: "notification." + type.lowercased()
        }
    }
}
