/// What a subscription's status at an instant depends on, as it stood then: of the
/// periods bought by the instant (refunds as known now), the standing one (the
/// latest-ending one not revoked) and whether the last purchased was revoked; and the
/// renewal info's grace period and billing retry, which speak of the renewal after the
/// last period, so none when a period was bought after the instant. A past instant is
/// thus judged by the period that covered it, not by the latest. SubscriptionState reads
/// them from payloads; a store's figures read them from its fact columns (StoredFacts),
/// its summaries when no period was bought after the instant, else the rows as of it
/// (SubscriptionSummaries.asExpression).
public struct StatusInputs: Sendable, Equatable {
    /// The standing period's dates; nil when no period bought by the instant stands. A period without a
    /// purchase date counts as bought at the beginning of time, one without an expiry as
    /// ended then.
    public var standingPurchased: Int64?
    public var standingExpires: Int64?
    public var lastPurchaseRevoked: Bool
    public var gracePeriodExpires: Int64?
    public var inBillingRetry: Bool

    public init(standingPurchased: Int64?, standingExpires: Int64?, lastPurchaseRevoked: Bool, gracePeriodExpires: Int64?,
                inBillingRetry: Bool) {
        self.standingPurchased = standingPurchased
        self.standingExpires = standingExpires
        self.lastPurchaseRevoked = lastPurchaseRevoked
        self.gracePeriodExpires = gracePeriodExpires
        self.inBillingRetry = inBillingRetry
    }
}

extension SubscriptionState.Status {
    /// The one rule. Active while the standing period covers the instant; otherwise
    /// revoked when the last purchase was refunded or revoked; otherwise what the renewal
    /// info says of the failed renewal (grace period while it lasts, then billing retry);
    /// otherwise expired.
    public static func at(_ instant: Int64, _ inputs: StatusInputs) -> Self {
        if let expires = inputs.standingExpires, instant < expires, (inputs.standingPurchased ?? .min) <= instant { return .active }
        if inputs.lastPurchaseRevoked { return .revoked }
        if let grace = inputs.gracePeriodExpires, instant < grace { return .gracePeriod }
        if inputs.inBillingRetry { return .billingRetry }
        return .expired
    }

    /// The same rule as an SQL `CASE` giving Apple's status number, over the columns that
    /// hold the inputs (each an SQL expression: a column, or NULL) and `instant` (a
    /// placeholder or a literal), for SQLite and PostgreSQL alike. Kept beside `at(_:_:)`,
    /// condition for condition; the store's figures are tested against SubscriptionState.
    public static func sqlCase(_ columns: StatusInputColumns, instant: String) -> String {
        """
        CASE WHEN \(columns.standingExpires) IS NOT NULL AND \(instant) < \(columns.standingExpires)
               AND (\(columns.standingPurchased) IS NULL OR \(columns.standingPurchased) <= \(instant)) THEN \(Self.active.rawValue)
             WHEN \(columns.lastPurchaseRevoked) THEN \(Self.revoked.rawValue)
             WHEN \(columns.gracePeriodExpires) IS NOT NULL AND \(instant) < \(columns.gracePeriodExpires) THEN \(Self.gracePeriod.rawValue)
             WHEN \(columns.inBillingRetry) = 1 THEN \(Self.billingRetry.rawValue)
             ELSE \(Self.expired.rawValue) END
        """
    }
}

/// Where a query holds each of StatusInputs (SQL expressions); `lastPurchaseRevoked` is
/// a condition, the others values (`inBillingRetry` 1 or 0, as StoredFacts keeps booleans).
public struct StatusInputColumns: Sendable {
    public var standingPurchased, standingExpires, lastPurchaseRevoked, gracePeriodExpires, inBillingRetry: String

    public init(standingPurchased: String, standingExpires: String, lastPurchaseRevoked: String, gracePeriodExpires: String,
                inBillingRetry: String) {
        self.standingPurchased = standingPurchased
        self.standingExpires = standingExpires
        self.lastPurchaseRevoked = lastPurchaseRevoked
        self.gracePeriodExpires = gracePeriodExpires
        self.inBillingRetry = inBillingRetry
    }
}
