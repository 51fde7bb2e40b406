import ReceiptCore
import Testing

/// Each row of the README's bad-input table, built here byte by byte.
struct BadInputTests {
    @Test func aWellFormedMinimalReceiptParses() throws {
        let receipt = try Receipt.parse(DER.receipt(attributes: DER.validAppAttributes))
        #expect(receipt.bundleID == "com.example.app")
        #expect(receipt.purchaseCount == 0)
    }

    @Test func emptyAndWhitespace() {
        #expect(parseStatus([]) == .emptyInput)
        #expect(parseStatus(Array(" \r\n\t ".utf8)) == .emptyInput)
    }

    @Test func invalidBase64() {
        #expect(parseStatus(Array("MIIT$$$$".utf8)) == .badBase64)
        #expect(parseStatus(Array("MIITx".utf8)) == .badBase64)
        #expect(parseStatus(Array("MI=T".utf8)) == .badBase64)
    }

    @Test func lengthOverflowAndNeverClosedIndefiniteLength() {
        #expect(parseStatus([0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xFF]) == .lengthOverflow)
        #expect(parseStatus([0x30, 0x80, 0x06, 0x01, 0x2A]) == .truncated)
        #expect(parseStatus([0x30, 0x80]) == .truncated)
    }

    @Test func indefiniteLengthOnAPrimitiveIsRejected() {
        #expect(parseStatus([0x30, 0x80, 0x04, 0x80, 0x00, 0x00, 0x00, 0x00]) == .badEncoding)
    }

    @Test func nestingTenThousandDeep() {
        let nested = Array(repeating: [UInt8]([0x30, 0x80]), count: 10_000).flatMap { $0 }
            + Array(repeating: 0, count: 20_000)
        #expect(parseStatus(nested) == .nestingTooDeep)
    }

    @Test func wrongOuterOID() {
        #expect(parseStatus(DER.receipt(payload: DER.set([]), outerOID: DER.dataOID)) == .notSignedData)
    }

    @Test func signedDataWithoutSignersOrCertificatesStillParses() throws {
        // Structure only: whether anyone signed it is the verifier's question.
        let receipt = try Receipt.parse(DER.receipt(attributes: DER.validAppAttributes))
        #expect(receipt.bundleID != nil)
    }

    @Test func payloadThatIsNotASet() {
        #expect(parseStatus(DER.receipt(payload: DER.tlv(0x30, []))) == .unexpectedTag)
    }

    @Test func attributeWithANonIntegerType() {
        let bad = DER.tlv(0x30, DER.utf8("2") + DER.integer(1) + DER.tlv(0x04, DER.utf8("x")))
        #expect(parseStatus(DER.receipt(attributes: [bad])) == .unexpectedTag)
    }

    @Test func utf8StringWithInvalidUTF8() {
        for bytes: [UInt8] in [[0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0xF4, 0x90, 0x80, 0x80]] {
            let attribute = DER.attribute(2, DER.tlv(0x0C, Array("ok".utf8) + bytes))
            #expect(parseStatus(DER.receipt(attributes: [attribute])) == .badUTF8, "\(bytes)")
        }
        let fine = DER.attribute(2, DER.utf8("héllo ✓ 𝄞"))
        #expect(parseStatus(DER.receipt(attributes: [fine])) == nil)
    }

    @Test func integerWiderThan64Bits() {
        let wide = DER.tlv(0x02, [0x01] + Array(repeating: 0, count: 8))
        #expect(parseStatus(DER.receipt(attributes: [DER.attribute(1, wide)])) == .integerOverflow)
        let wideType = DER.tlv(0x30, wide + DER.integer(1) + DER.tlv(0x04, []))
        #expect(parseStatus(DER.receipt(attributes: [wideType])) == .integerOverflow)
    }

    @Test(arguments: ["2024-13-01T00:00:00Z", "2024-02-30T00:00:00Z", "2024-01-01 00:00:00Z", "2024-01-01T00:00:00",
                      "2024-01-01T00:00:00+03:00", "2024-01-01T24:00:00Z", "2024-01-01T00:00:00.Z", "tomorrow",
                      "2024-01-01T00:00:00Zjunk"])
    func dateInNoKnownForm(text: String) {
        let attribute = DER.attribute(12, DER.ia5(text))
        #expect(parseStatus(DER.receipt(attributes: [attribute])) == .badDate)
    }

    @Test func type17InsideType17IsKeptRawNotDescended() throws {
        let inner = DER.set([DER.attribute(1702, DER.utf8("p")), DER.attribute(17, DER.set([]))])
        let receipt = try Receipt.parse(DER.receipt(attributes: DER.validAppAttributes + [DER.attribute(17, inner)]))
        #expect(receipt.purchaseCount == 1)
        #expect(receipt.purchases[0].unknownAttributes.map(\.type) == [17])
    }

    @Test func duplicateBundleID() {
        let attributes = DER.validAppAttributes + [DER.attribute(2, DER.utf8("com.evil.app"))]
        #expect(parseStatus(DER.receipt(attributes: attributes)) == .duplicateAttribute)
    }

    @Test func duplicateInAppFieldInOnePurchase() {
        let purchase = DER.set([DER.attribute(1703, DER.utf8("1")), DER.attribute(1703, DER.utf8("2"))])
        #expect(parseStatus(DER.receipt(attributes: [DER.attribute(17, purchase)])) == .duplicateAttribute)
    }

    @Test func knownAttributeWithTheWrongInnerType() {
        #expect(parseStatus(DER.receipt(attributes: [DER.attribute(2, DER.integer(5))])) == .badAttribute)
        #expect(parseStatus(DER.receipt(attributes: [DER.attribute(1, DER.utf8("5"))])) == .badAttribute)
        #expect(parseStatus(DER.receipt(attributes: [DER.attribute(2, [])])) == .badAttribute)
        #expect(parseStatus(DER.receipt(attributes: [DER.attribute(2, DER.utf8("a") + [0x00])])) == .badAttribute)
        let notABoolean = DER.set([DER.attribute(1713, DER.integer(2))])
        #expect(parseStatus(DER.receipt(attributes: [DER.attribute(17, notABoolean)])) == .badAttribute)
    }

    @Test func trailingBytesAfterTheReceipt() {
        #expect(parseStatus(DER.receipt(attributes: DER.validAppAttributes) + [0x00]) == .trailingData)
    }

    @Test func jwsAndPEM() {
        #expect(parseStatus(Array("eyJhbGciOiJFUzI1NiJ9.eyJ4IjoxfQ.c2ln".utf8)) == .unsupportedFormat)
        #expect(parseStatus(Array("-----BEGIN PKCS7-----\nMIIB\n-----END PKCS7-----\n".utf8)) == .unsupportedFormat)
    }

    @Test func aWrapperInsteadOfTheReceiptSaysWhatToPass() throws {
        let base64 = "MII" + String(repeating: "A", count: 17)
        for (input, says) in [(#"{"receipt-data": "\#(base64)", "password": "x"}"#, "POST it to /verifyReceipt"),
                              ("\"\(base64)\"\n", "remove the quotes")] {
            do {
                _ = try Receipt.parse(Array(input.utf8))
                Issue.record("\(input) parsed as a receipt")
            } catch {
                #expect(error.status == .unsupportedFormat && error.detail.contains(says), "\(error)")
            }
        }
    }

    @Test func randomBinary() {
        #expect(parseStatus([0x00, 0x01, 0xFE]) == .notAReceipt)
    }

    @Test func limitsAreEnforced() {
        func status(_ adjust: (inout ParseLimits) -> Void, _ input: [UInt8]) -> ReceiptStatus? {
            var limits = ParseLimits()
            adjust(&limits)
            do {
                _ = try Receipt.parse(input, limits: limits)
                return nil
            } catch {
                return error.status
            }
        }
        let receipt = DER.receipt(attributes: DER.validAppAttributes)
        #expect(status({ $0.maxInputBytes = receipt.count - 1 }, receipt) == .inputTooLarge)
        #expect(status({ $0.maxAttributes = 3 }, receipt) == .limitExceeded)  // it has four
        #expect(status({ $0.maxStringBytes = 4 }, receipt) == .limitExceeded)  // a 15-byte bundle id
        #expect(status({ $0.maxDepth = 2 }, receipt) == .nestingTooDeep)
        #expect(status({ _ in }, receipt) == nil)
    }

    @Test func errorsNameTheirPlace() {
        do {
            _ = try Receipt.parse(DER.receipt(attributes: [DER.attribute(12, DER.ia5("soon"))]))
        } catch {
            #expect(error.detail.contains("receipt_creation_date"))
            #expect(error.detail.contains("soon"))
            #expect(error.offset != nil)
        }
    }
}
