/// A parsed app receipt: every field typed, purchases in receipt order, unknown
/// attributes kept raw. Immutable and safe to share across threads.
///
/// Parsing checks structure only. Whether to believe the receipt is the
/// verifier's business.
public final class Receipt: FieldRecord, @unchecked Sendable {
    let storage: ReceiptStorage
    let tables: ParsedPayload
    let container: SignedDataContainer

    var scope: ReceiptField.Scope { .app }
    func stored(_ slot: Int) -> StoredValue { tables.appValues[slot] }
    var attributeOffsets: UnsafeBufferPointer<UInt32> { tables.appAttributeOffsets.elements }

    init(storage: ReceiptStorage, container: SignedDataContainer, payload: consuming ParsedPayload) {
        self.storage = storage
        self.container = container
        tables = payload
    }

    /// Parses raw DER/BER bytes or base64 text.
    public static func parse(_ input: [UInt8], limits: ParseLimits = .default) throws(ReceiptError) -> Receipt {
        try input.withUnsafeBufferPointer { (bytes) throws(ReceiptError) in try parse(bytes, limits: limits) }
    }

    public static func parse(_ input: UnsafeBufferPointer<UInt8>, limits: ParseLimits = .default) throws(ReceiptError) -> Receipt {
        try ReceiptParser.parse(input, limits: limits)
    }

    /// The typed value of any field of this scope; nil when absent or of the other scope.
    public func value(_ field: ReceiptField) -> ReceiptValue? { typedValue(field) }
    /// Every attribute in receipt order, known and unknown, as stored.
    public var rawAttributes: [RawAttribute] { attributesAsStored }
    /// The attributes this library does not type (Apple's own, which change); kept raw.
    public var unknownAttributes: [RawAttribute] { attributesNotTyped }

    public var receiptType: String? { string(.receiptType) }
    public var appItemID: Int64? { integer(.appItemID) }
    public var bundleID: String? { string(.bundleID) }
    /// The bundle_id attribute's value bytes exactly as stored (the whole UTF8String
    /// TLV), which is what the device hash covers.
    public var bundleIDRawValue: [UInt8]? { bytes(.bundleID) }
    public var applicationVersion: String? { string(.applicationVersion) }
    public var opaqueValue: [UInt8]? { bytes(.opaqueValue) }
    public var sha1Hash: [UInt8]? { bytes(.sha1Hash) }
    public var receiptCreationDate: ReceiptDate? { date(.receiptCreationDate) }
    public var versionExternalIdentifier: Int64? { integer(.versionExternalIdentifier) }
    public var originalPurchaseDate: ReceiptDate? { date(.originalPurchaseDate) }
    public var originalApplicationVersion: String? { string(.originalApplicationVersion) }
    public var expirationDate: ReceiptDate? { date(.expirationDate) }

    public var purchaseCount: Int { tables.purchases.count }

    public var purchases: [InAppPurchase] { (0..<purchaseCount).map { InAppPurchase(receipt: self, index: $0) } }

    public func purchase(at index: Int) -> InAppPurchase? {
        guard index >= 0 && index < purchaseCount else { return nil }
        return InAppPurchase(receipt: self, index: index)
    }

    /// The receipt's DER/BER encoding as parsed (after any base64 decoding).
    public var encodedBytes: [UInt8] { Array(storage.encoded) }
}

/// One in-app purchase entry (attribute 17). Cheap to copy: it borrows from its receipt.
public struct InAppPurchase: FieldRecord, Sendable {
    public let receipt: Receipt
    public let index: Int

    var storage: ReceiptStorage { receipt.storage }
    var scope: ReceiptField.Scope { .inApp }
    func stored(_ slot: Int) -> StoredValue { receipt.tables.purchaseValue(index, slot: slot) }
    /// Borrowed from the receipt, which this purchase keeps alive.
    var attributeOffsets: UnsafeBufferPointer<UInt32> {
        UnsafeBufferPointer(rebasing: receipt.tables.purchaseAttributeOffsets.elements[receipt.tables.purchaseAttributes(index)])
    }

    /// The typed value of any field of this scope; nil when absent or of the other scope.
    public func value(_ field: ReceiptField) -> ReceiptValue? { typedValue(field) }
    /// Every attribute in receipt order, known and unknown, as stored.
    public var rawAttributes: [RawAttribute] { attributesAsStored }
    /// The attributes this library does not type (Apple's own, which change); kept raw.
    public var unknownAttributes: [RawAttribute] { attributesNotTyped }

    public var quantity: Int64? { integer(.quantity) }
    public var productID: String? { string(.productID) }
    public var transactionID: String? { string(.transactionID) }
    public var purchaseDate: ReceiptDate? { date(.purchaseDate) }
    public var originalTransactionID: String? { string(.originalTransactionID) }
    public var originalPurchaseDate: ReceiptDate? { date(.inAppOriginalPurchaseDate) }
    /// −1 unknown, 0 non-consumable, 1 consumable, 2 non-renewing, 3 auto-renewable (observed).
    public var productType: Int64? { integer(.productType) }
    public var expiresDate: ReceiptDate? { date(.expiresDate) }
    public var webOrderLineItemID: Int64? { integer(.webOrderLineItemID) }
    public var cancellationDate: ReceiptDate? { date(.cancellationDate) }
    public var isTrialPeriod: Bool? { boolean(.isTrialPeriod) }
    public var isInIntroOfferPeriod: Bool? { boolean(.isInIntroOfferPeriod) }
    public var promotionalOfferID: String? { string(.promotionalOfferID) }
}
