@_spi(ReceiptInternal) @testable import ReceiptCore
import Testing

/// Fields are described once, in ReceiptField: everything else derives from it.
struct FieldTableTests {
    /// Each field is found by its own attribute type, whatever its number: no
    /// hard-coded range leaves a new field to be kept raw.
    @Test func everyFieldIsKnownByItsType() {
        for field in ReceiptField.allCases {
            #expect(ReceiptField.known(type: Int64(field.rawValue), in: field.scope) == field, "\(field)")
        }
        #expect(ReceiptField.known(type: 1722, in: .inApp) == nil)
    }

    /// A purchase records which fields it holds in a bit set: one bit per in-app field.
    /// This test, not a run-time trap, is what stops a field too many.
    @Test func thePurchaseBitSetHasABitForEveryInAppField() {
        #expect(ReceiptField.inAppFields.count <= PurchaseRecord.PresentSlots.bitWidth)
        #expect(MemoryLayout<PurchaseRecord>.stride == 12)
    }
}

struct HexTests {
    @Test func hexIsReadStrictly() {
        #expect(hexBytes("6c4008B5945e") == [0x6C, 0x40, 0x08, 0xB5, 0x94, 0x5E])
        #expect(hexBytes("6c:40:08") == [0x6C, 0x40, 0x08])
        for bad in ["", "6", "6g", "6c4", " 6c"] { #expect(hexBytes(bad) == nil, "\(bad)") }
    }
}
