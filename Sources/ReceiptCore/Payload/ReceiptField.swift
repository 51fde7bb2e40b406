/// The attributes this library types, identified by Apple's attribute type number
/// (docs/FORMAT.md §2). The raw values are also the C ABI's `receipt_field_t` constants.
public enum ReceiptField: Int32, Sendable, CaseIterable {
    // App receipt
    case receiptType = 0
    case appItemID = 1
    case bundleID = 2
    case applicationVersion = 3
    case opaqueValue = 4
    case sha1Hash = 5
    case receiptCreationDate = 12
    case versionExternalIdentifier = 16
    case inApp = 17
    case originalPurchaseDate = 18
    case originalApplicationVersion = 19
    case expirationDate = 21
    // In-app purchase
    case quantity = 1701
    case productID = 1702
    case transactionID = 1703
    case purchaseDate = 1704
    case originalTransactionID = 1705
    case inAppOriginalPurchaseDate = 1706
    case productType = 1707
    case expiresDate = 1708
    case webOrderLineItemID = 1711
    case cancellationDate = 1712
    case isTrialPeriod = 1713
    case isInIntroOfferPeriod = 1719
    case promotionalOfferID = 1721

    public enum Kind: Sendable {
        case string, integer, boolean, date, bytes, purchases
    }

    public enum Scope: Sendable {
        case app, inApp
    }

    public var kind: Kind {
        switch self {
        case .receiptType, .bundleID, .applicationVersion, .originalApplicationVersion,
             .productID, .transactionID, .originalTransactionID, .promotionalOfferID:
            .string
        case .appItemID, .versionExternalIdentifier, .quantity, .productType, .webOrderLineItemID:
            .integer
        case .isTrialPeriod, .isInIntroOfferPeriod:
            .boolean
        case .receiptCreationDate, .originalPurchaseDate, .expirationDate, .purchaseDate,
             .inAppOriginalPurchaseDate, .expiresDate, .cancellationDate:
            .date
        case .opaqueValue, .sha1Hash:
            .bytes
        case .inApp:
            .purchases
        }
    }

    public var scope: Scope { rawValue >= 1701 ? .inApp : .app }

    /// The App Store JSON's key; for the three attributes that JSON never shows,
    /// a name in the same style.
    public var name: String { staticName.description }

    /// The same, in static NUL-terminated storage that C callers may keep forever.
    public var staticName: StaticString {
        switch self {
        case .receiptType: "receipt_type"
        case .appItemID: "app_item_id"
        case .bundleID: "bundle_id"
        case .applicationVersion: "application_version"
        case .opaqueValue: "opaque_value"
        case .sha1Hash: "sha1_hash"
        case .receiptCreationDate: "receipt_creation_date"
        case .versionExternalIdentifier: "version_external_identifier"
        case .inApp: "in_app"
        case .originalPurchaseDate, .inAppOriginalPurchaseDate: "original_purchase_date"
        case .originalApplicationVersion: "original_application_version"
        case .expirationDate: "expiration_date"
        case .quantity: "quantity"
        case .productID: "product_id"
        case .transactionID: "transaction_id"
        case .purchaseDate: "purchase_date"
        case .originalTransactionID: "original_transaction_id"
        case .productType: "product_type"
        case .expiresDate: "expires_date"
        case .webOrderLineItemID: "web_order_line_item_id"
        case .cancellationDate: "cancellation_date"
        case .isTrialPeriod: "is_trial_period"
        case .isInIntroOfferPeriod: "is_in_intro_offer_period"
        case .promotionalOfferID: "promotional_offer_id"
        }
    }

    /// The fields of one scope, in attribute-type order; a field's position here is its storage slot.
    public static let appFields: [ReceiptField] = allCases.filter { $0.scope == .app }
    public static let inAppFields: [ReceiptField] = allCases.filter { $0.scope == .inApp }

    var slot: Int {
        switch scope {
        case .app: ReceiptField.appSlots[Int(rawValue)]
        case .inApp: ReceiptField.inAppSlots[Int(rawValue - 1701)]
        }
    }

    /// The lowest to the highest attribute type a scope knows.
    static func typeRange(of scope: Scope) -> ClosedRange<Int64> {
        let types = (scope == .app ? appFields : inAppFields).map { Int64($0.rawValue) }
        return types.min()!...types.max()!
    }

    /// The field an attribute type denotes in a scope; nil for types kept only raw.
    static func known(type: Int64, in scope: Scope) -> ReceiptField? {
        FieldTable.shared.entry(type: type, in: scope)?.field
    }

    fileprivate static func lookup(type: Int64, in scope: Scope) -> ReceiptField? {
        switch scope {
        case .app:
            guard type >= 0 && type < Int64(appSlots.count), appSlots[Int(type)] >= 0 else { return nil }
            return appFields[appSlots[Int(type)]]
        case .inApp:
            guard type >= 1701 && type < 1701 + Int64(inAppSlots.count), inAppSlots[Int(type - 1701)] >= 0 else {
                return nil
            }
            return inAppFields[inAppSlots[Int(type - 1701)]]
        }
    }

    private static let appSlots: [Int] = slotTable(appFields, base: 0)
    private static let inAppSlots: [Int] = slotTable(inAppFields, base: 1701)

    private static func slotTable(_ fields: [ReceiptField], base: Int32) -> [Int] {
        let size = Int(fields.map(\.rawValue).max()! - base) + 1
        var table = [Int](repeating: -1, count: size)
        for (slot, field) in fields.enumerated() { table[Int(field.rawValue - base)] = slot }
        return table
    }
}

/// A field with its storage slot and kind resolved, for the parser's inner loop,
/// where recomputing them per attribute showed up in profiles.
struct FieldEntry {
    let field: ReceiptField
    let slot: Int
    let kind: ReceiptField.Kind
}

struct FieldTable: Sendable {
    static let shared = FieldTable()

    private let app: [FieldEntry?]
    private let inApp: [FieldEntry?]

    private init() {
        func entries(_ types: ClosedRange<Int64>, _ scope: ReceiptField.Scope) -> [FieldEntry?] {
            types.map { type in
                ReceiptField.lookup(type: type, in: scope).map { FieldEntry(field: $0, slot: $0.slot, kind: $0.kind) }
            }
        }
        // Every known type of each scope, from the field list itself: a new field needs no range edited here.
        app = entries(ReceiptField.typeRange(of: .app), .app)
        inApp = entries(ReceiptField.typeRange(of: .inApp), .inApp)
    }

    @inline(__always)
    func entry(type: Int64, in scope: ReceiptField.Scope) -> FieldEntry? {
        let (table, base): ([FieldEntry?], Int64) = scope == .app ? (app, 0) : (inApp, 1701)
        let index = type &- base
        guard index >= 0 && index < Int64(table.count) else { return nil }
        return table[Int(index)]
    }
}
