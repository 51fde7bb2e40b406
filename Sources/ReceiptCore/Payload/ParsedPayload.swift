/// How much of the payload a parse types.
enum PayloadScope {
    /// Every attribute docs/FORMAT.md §2 names, purchases included: what `Receipt.parse` does.
    case everything
    /// The app's own attributes only, which is all a verdict reads. The in_app
    /// attributes are skipped unread, so their errors surface only in a full parse.
    /// The receipt borrows the input and its strings are not NUL-terminated, and it
    /// keeps no raw attribute offsets, so it must not outlive the call that parsed it
    /// (ReceiptVerifier.verify(encoded:)).
    case verdictFields
}

/// The flat tables a Receipt is made of, built by PayloadBuilder.
struct ParsedPayload: ~Copyable {
    var appValues = PlainVector<StoredValue>()
    var appAttributeOffsets = PlainVector<UInt32>()
    var purchases = PlainVector<PurchaseRecord>()
    /// Each purchase's present values, in slot order (see PurchaseRecord).
    var purchaseValues = PlainVector<StoredValue>()
    var purchaseAttributeOffsets = PlainVector<UInt32>()

    init() throws(ReceiptError) {
        guard appValues.append(.absent, repeated: ReceiptField.appFields.count) else { throw ParsedPayload.outOfMemory }
    }

    static let outOfMemory = ReceiptError(.noMemory, "out of memory for the receipt's tables")

    func purchaseValue(_ purchase: Int, slot: Int) -> StoredValue {
        let record = purchases[purchase]
        let bit = PurchaseRecord.PresentSlots(1) << PurchaseRecord.PresentSlots(slot)
        guard record.presentSlots & bit != 0 else { return .absent }
        return purchaseValues[Int(record.firstValue) + (record.presentSlots & (bit &- 1)).nonzeroBitCount]
    }

    /// Where a purchase's attributes are in `purchaseAttributeOffsets`.
    func purchaseAttributes(_ purchase: Int) -> Range<Int> {
        let end = purchase + 1 < purchases.count ? Int(purchases[purchase + 1].firstAttribute) : purchaseAttributeOffsets.count
        return Int(purchases[purchase].firstAttribute)..<end
    }
}

/// One purchase's place in the tables. Only the values a purchase has are stored,
/// so memory follows what the receipt holds: an empty purchase of 12 bytes costs
/// this record, not a row for every field.
struct PurchaseRecord: BitwiseCopyable {
    var firstValue: UInt32
    var firstAttribute: UInt32
    /// Bit n set: slot n has a value, at firstValue + the number of lower bits set.
    /// A bit per in-app field: a test checks that `PresentSlots` has enough bits
    /// (widening it to UInt32 leaves the record's 12-byte stride unchanged).
    var presentSlots: PresentSlots

    typealias PresentSlots = UInt16
}
