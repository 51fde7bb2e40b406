import Foundation
import ReceiptCore
import Testing

/// Every real receipt, every field, against what an independent decoder found.
@Suite(.enabled(if: Fixtures.available, Fixtures.skipReason))
struct RealReceiptTests {
    @Test func allTwelveReceiptsAreListed() throws {
        let files = try Fixtures.expectations().map { $0["file"] as! String }.sorted()
        #expect(files == Fixtures.receiptFiles.sorted())
    }

    @Test(arguments: Fixtures.receiptFiles)
    func fieldsMatchTheIndependentDecoder(file: String) throws {
        let expected = try #require(try Fixtures.expectations().first { $0["file"] as? String == file })
        let receipt = try Receipt.parse(try Fixtures.bytes("receipts/" + file))

        let appTypes = Set(receipt.rawAttributes.map(\.type)).sorted()
        #expect(appTypes == (expected["attribute_types"] as! [Int]).map(Int64.init))
        for field in ReceiptField.appFields where field.kind != .bytes && field != .inApp {
            expectField(field, of: receipt.value(field), equals: expected[field.name], in: file)
        }
        #expect(hex(receipt.bundleIDRawValue) == expected["bundle_id_raw_hex"] as? String)
        #expect(hex(receipt.opaqueValue) == expected["opaque_hex"] as? String)
        #expect(hex(receipt.sha1Hash) == expected["sha1_hex"] as? String)

        let expectedPurchases = expected["in_app"] as! [[String: Any]]
        #expect(receipt.purchaseCount == expected["in_app_count"] as? Int)
        #expect(receipt.purchaseCount == expectedPurchases.count)
        for (purchase, expectedPurchase) in zip(receipt.purchases, expectedPurchases) {
            for field in ReceiptField.inAppFields {
                expectField(field, of: purchase.value(field), equals: expectedPurchase[field.name],
                            in: "\(file) purchase \(purchase.index)")
            }
        }
    }

    /// The decoder writes dates as their text, "" for an empty (absent) one, and
    /// booleans as 0/1; a missing key means the attribute is absent.
    private func expectField(_ field: ReceiptField, of value: ReceiptValue?, equals expected: Any?, in place: String) {
        switch (value, expected) {
        case (nil, nil):
            break
        case (nil, let text as String) where field.kind == .date:
            #expect(text == "", "\(place): \(field.name) should be \(text)")
        case (.string(let actual), let text as String):
            #expect(actual == text, "\(place): \(field.name)")
        case (.date(let actual), let text as String):
            #expect(actual.text == text, "\(place): \(field.name)")
        case (.integer(let actual), let number as Int):
            #expect(actual == Int64(number), "\(place): \(field.name)")
        case (.boolean(let actual), let number as Int):
            #expect((actual ? 1 : 0) == number, "\(place): \(field.name)")
        default:
            Issue.record("\(place): \(field.name) is \(String(describing: value)), expected \(String(describing: expected))")
        }
    }

    @Test func datesInEveryFormBecomeTheSameInstants() throws {
        let xcode = try Receipt.parse(try Fixtures.bytes("receipts/kvitto__storeKitTestReceipt.der"))
        // 2020-10-16T14:29:30+0300 is 11:29:30 UTC.
        #expect(xcode.receiptCreationDate?.millisecondsSince1970 == 1_602_847_770_000)
        #expect(xcode.expirationDate?.text == "4001-01-01T02:00:00+0200")
        #expect(xcode.expirationDate?.millisecondsSince1970 == 64_092_211_200_000)
    }

    @Test func base64InputParsesLikeRawBytes() throws {
        let raw = try Fixtures.bytes("receipts/rc__receiptsample1.der")
        let text = Array(Data(raw).base64EncodedString(options: .lineLength76Characters).utf8)
        let fromText = try Receipt.parse(text)
        #expect(fromText.encodedBytes == raw)
        #expect(fromText.purchaseCount == 9)
    }

    @Test(arguments: ["edge/arv__deprecatedSinglesType-legacy-txn-receipt.bin",
                      "edge/rc__unsupportedReceipt2-legacy-txn-receipt.bin"])
    func legacyTransactionReceiptsHaveTheirOwnStatus(file: String) throws {
        let bytes = try Fixtures.bytes(file)
        #expect(throws: ReceiptError.self) { try Receipt.parse(bytes) }
        do { _ = try Receipt.parse(bytes) } catch { #expect(error.status == .legacyReceipt) }
        let base64 = Array(Data(bytes).base64EncodedString().utf8)
        do { _ = try Receipt.parse(base64) } catch { #expect(error.status == .legacyReceipt) }
    }

    /// A server must tell a cut-short upload from a malformed one: every cut of a
    /// real receipt, DER or BER, is TRUNCATED (or EMPTY_INPUT at 0 bytes).
    @Test(arguments: ["receipts/tp__receipt-xcode.der", "receipts/tp__receipt-production.der"])
    func everyTruncationOfARealReceiptIsTruncated(file: String) throws {
        let bytes = try Fixtures.bytes(file)
        for length in 1..<bytes.count {
            #expect(parseStatus(Array(bytes[0..<length])) == .truncated, "cut at \(length)")
        }
    }

    /// The sample answer of the App Store for this receipt: every field a receipt
    /// can tell must come out identical.
    @Test func jsonMatchesTheAppStoreResponse() throws {
        let receipt = try Receipt.parse(try Fixtures.bytes("receipts/rc__receiptsample1.der"))
        let ours = try JSONSerialization.jsonObject(with: Data(AppStoreReceiptJSON.render(receipt).utf8)) as! [String: Any]
        let response = try JSONSerialization.jsonObject(
            with: Data(try Fixtures.bytes("responses/rc__verifyReceiptSample1.json"))) as! [String: Any]
        let apple = response["receipt"] as! [String: Any]
        let notInReceipts: Set = ["request_date", "request_date_ms", "request_date_pst", "download_id", "in_app"]
        for (key, value) in apple where !notInReceipts.contains(key) {
            #expect(ours[key].map { "\($0)" } == "\(value)", "receipt.\(key)")
        }
        let ourPurchases = ours["in_app"] as! [[String: Any]]
        let applePurchases = apple["in_app"] as! [[String: Any]]
        #expect(ourPurchases.count == applePurchases.count)
        for (mine, theirs) in zip(ourPurchases, applePurchases) {
            #expect(Set(mine.keys) == Set(theirs.keys).subtracting(["subscription_group_identifier"]))
            for (key, value) in theirs where key != "subscription_group_identifier" {
                #expect(mine[key] as? String == value as? String, "in_app.\(key)")
            }
        }
    }
}
