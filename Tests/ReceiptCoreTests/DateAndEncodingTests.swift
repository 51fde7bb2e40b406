import ReceiptCore
import Testing

struct DateAndEncodingTests {
    private func creationDate(_ text: String) throws -> ReceiptDate? {
        try Receipt.parse(DER.receipt(attributes: [DER.attribute(12, DER.ia5(text))])).receiptCreationDate
    }

    @Test func everyDateFormDenotesTheRightInstant() throws {
        #expect(try creationDate("2020-07-22T17:39:08Z")?.millisecondsSince1970 == 1_595_439_548_000)
        #expect(try creationDate("2020-07-22T17:39:08.5Z")?.millisecondsSince1970 == 1_595_439_548_500)
        #expect(try creationDate("2020-07-22T17:39:08.123456789Z")?.millisecondsSince1970 == 1_595_439_548_123)
        #expect(try creationDate("2020-07-22T20:39:08+0300")?.millisecondsSince1970 == 1_595_439_548_000)
        #expect(try creationDate("2020-07-22T09:39:08-0800")?.millisecondsSince1970 == 1_595_439_548_000)
        #expect(try creationDate("1969-12-31T23:59:59Z")?.millisecondsSince1970 == -1000)
        #expect(try creationDate("2024-02-29T00:00:00Z")?.millisecondsSince1970 == 1_709_164_800_000)
        #expect(try creationDate("")?.millisecondsSince1970 == nil)
    }

    @Test func originalTextIsKept() throws {
        #expect(try creationDate("2020-07-22T20:39:08+0300")?.text == "2020-07-22T20:39:08+0300")
    }

    /// US Pacific time: the 2007 rules (second Sunday of March to first Sunday of November).
    @Test func pacificTimeFollowsDaylightSaving() throws {
        func pst(_ text: String) throws -> String? {
            let receipt = try Receipt.parse(DER.receipt(attributes: [DER.attribute(12, DER.ia5(text))]))
            let json = AppStoreReceiptJSON.render(receipt)
            guard let range = json.range(of: "\"receipt_creation_date_pst\":\"") else { return nil }
            return String(json[range.upperBound...].prefix(19))
        }
        #expect(try pst("2024-03-10T09:59:59Z") == "2024-03-10 01:59:59")  // last second of PST
        #expect(try pst("2024-03-10T10:00:00Z") == "2024-03-10 03:00:00")  // first of PDT
        #expect(try pst("2024-11-03T08:59:59Z") == "2024-11-03 01:59:59")  // last of PDT
        #expect(try pst("2024-11-03T09:00:00Z") == "2024-11-03 01:00:00")  // first of PST
        #expect(try pst("2006-04-02T10:00:00Z") == "2006-04-02 03:00:00")  // 1987–2006 rules
        #expect(try pst("2006-10-29T09:00:00Z") == "2006-10-29 01:00:00")
        #expect(try pst("4001-01-01T00:00:00Z") == "4000-12-31 16:00:00")
    }

    @Test func base64WithLineBreaksAndPadding() throws {
        let raw = DER.receipt(attributes: DER.validAppAttributes)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var text = [UInt8]()
        var index = 0
        while index < raw.count {
            let chunk = Array(raw[index..<min(index + 3, raw.count)])
            let n = chunk.enumerated().reduce(0) { $0 | Int($1.element) << (16 - 8 * $1.offset) }
            for position in 0..<4 {
                text.append(position <= chunk.count ? alphabet[(n >> (18 - 6 * position)) & 63] : UInt8(ascii: "="))
            }
            index += 3
            if index % 57 == 0 { text += Array("\r\n".utf8) }
        }
        let receipt = try Receipt.parse(text + Array("\n".utf8))
        #expect(receipt.encodedBytes == raw)
    }

    @Test func statusNamesAndNumbersAreStable() {
        #expect(ReceiptStatus.truncated.rawValue == 110)
        #expect(ReceiptStatus.legacyReceipt.name == "RECEIPT_E_LEGACY_RECEIPT")
        #expect(Set(ReceiptStatus.allCases.map(\.name)).count == ReceiptStatus.allCases.count)
    }
}
