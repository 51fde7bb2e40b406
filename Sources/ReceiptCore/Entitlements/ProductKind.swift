/// What a product is, which decides how long a purchase of it lasts (docs/FORMAT.md §4).
public enum ProductKind: String, Sendable, CaseIterable {
    case consumable = "consumable"
    case nonConsumable = "non_consumable"
    case autoRenewable = "auto_renewable"
    case nonRenewing = "non_renewing"

    /// The kind attribute 1707 states: 0 non-consumable, 1 consumable, 2 non-renewing,
    /// 3 auto-renewable (observed). −1 and anything else state nothing.
    init?(attribute value: Int64) {
        switch value {
        case 0: self = .nonConsumable
        case 1: self = .consumable
        case 2: self = .nonRenewing
        case 3: self = .autoRenewable
        default: return nil
        }
    }
}

/// What the caller knows about its products and the receipt does not say: each
/// product's kind (for receipts without attribute 1707) and how long a
/// non-renewing subscription lasts (receipts never hold durations).
public struct ProductCatalog: Sendable, Equatable {
    public var kinds: [String: ProductKind]
    /// Milliseconds, by product id.
    public var nonRenewingDurations: [String: Int64]

    public init(kinds: [String: ProductKind] = [:], nonRenewingDurations: [String: Int64] = [:]) {
        self.kinds = kinds
        self.nonRenewingDurations = nonRenewingDurations
    }
}
