import Foundation
@_spi(ReceiptInternal) @testable import ReceiptCore
import Testing

/// The core of `receipt serve`: VerifyReceiptEndpoint (Apple's request in, Apple's
/// answer out) and VerdictEndpoint (/v1/verify). The HTTP side is tested in
/// Tests/python/test_serve.py against the running server.
struct VerifyReceiptEndpointTests {
    let endpoint = VerifyReceiptEndpoint(environment: .production, verifier: ReceiptVerifier())

    private func refusal(_ body: String) -> LocalVerifyReceipt.Answer {
        endpoint.answer(toBody: Array(body.utf8), requestDateMilliseconds: 0)
    }

    @Test(arguments: [
        ("not json", ReceiptStatus.badJSON), ("[]", .notAnObject), ("{}", .badField),
        (#"{"receipt-data": 1}"#, .badField), (#"{"receipt-data": "x", "password": []}"#, .badField),
        (#"{"receipt-data": "x", "exclude-old-transactions": 1}"#, .badField),
        (#"{"a": [[[]]]}"#, .nestingTooDeep), (#"{"receipt-data": "x", "receipt-data": "x"}"#, .duplicateMember),
    ])
    func unreadableRequestsGet21002WithTheReason(body: String, reason: ReceiptStatus) {
        let answer = refusal(body)
        #expect(answer.json == #"{"status":21002}"#)
        #expect(answer.status == 21002)
        #expect(answer.unreadable?.status == reason, "\(body)")
    }

    /// The request object is refused past its limit (64 values), however the values are spread.
    @Test func requestValueLimit() {
        let within = "{" + (0..<63).map { "\"k\($0)\": 0" }.joined(separator: ",") + "}"
        let beyond = "{" + (0..<64).map { "\"k\($0)\": 0" }.joined(separator: ",") + "}"
        #expect(refusal(within).unreadable?.status == .badField)  // read, then no receipt-data
        #expect(refusal(beyond).unreadable?.status == .limitExceeded)
    }

    @Test func detailsNameWhatIsWrong() {
        #expect(refusal(#"{"receipt-data": 5}"#).unreadable?.detail == #""receipt-data" is a number, not a base64 string"#)
        #expect(refusal(#"{"receipt-data": "x", "password": null, "exclude-old-transactions": []}"#).unreadable?.detail
                == #""exclude-old-transactions" is an array, not a boolean"#)
    }

    @Test func receiptDataThatIsNoReceiptGets21002() {
        let answer = refusal(#"{"receipt-data": "aGVsbG8gd29ybGQ="}"#)
        #expect(answer.status == 21002 && answer.unreadable != nil)
    }

    @Test func fixedAnswers() {
        #expect(VerifyReceiptEndpoint.notPostAnswer.json == #"{"status":21000}"#)
        let tooLarge = VerifyReceiptEndpoint.tooLargeAnswer(limit: 10)
        #expect(tooLarge.json == #"{"status":21002}"# && tooLarge.unreadable?.status == .inputTooLarge)
    }

    @Test func sharedSecretsCompareWhole() {
        #expect(SharedSecret.matchesAny("abc", of: ["x", "abc"]))
        #expect(!SharedSecret.matchesAny("ab", of: ["abc"]))
        #expect(!SharedSecret.matchesAny("abcd", of: ["abc"]))
        #expect(!SharedSecret.matchesAny(nil, of: ["abc"]))
        #expect(!SharedSecret.matchesAny("", of: ["abc"]))
    }
}

@Suite(.enabled(if: Fixtures.available, Fixtures.skipReason))
struct VerifyReceiptEndpointRealTests {
    let sample = { try Fixtures.bytes("receipts/rc__receiptsample1.der") }

    private func body(_ receipt: [UInt8], _ members: String = "") -> [UInt8] {
        Array(#"{"receipt-data": "\#(Data(receipt).base64EncodedString())"\#(members)}"#.utf8)
    }

    private func object(_ answer: LocalVerifyReceipt.Answer) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(answer.json.utf8)) as! [String: Any]
    }

    @Test func requestDateIsWrittenAsGiven() throws {
        let sandbox = VerifyReceiptEndpoint(environment: .sandbox, verifier: ReceiptVerifier())
        let answer = sandbox.answer(toBody: body(try sample()), requestDateMilliseconds: 1_595_440_486_402)
        let receipt = try object(answer)["receipt"] as! [String: Any]
        // Apple's recorded answer for this receipt was made at this instant.
        #expect(receipt["request_date"] as? String == "2020-07-22 17:54:46 Etc/GMT")
        #expect(receipt["request_date_ms"] as? String == "1595440486402")
        #expect(receipt["request_date_pst"] as? String == "2020-07-22 10:54:46 America/Los_Angeles")
        #expect(answer.status == 0)
    }

    @Test func sharedSecretIsRequiredForSubscriptions() throws {
        let sandbox = VerifyReceiptEndpoint(environment: .sandbox, verifier: ReceiptVerifier(), sharedSecrets: ["s3cret"])
        #expect(sandbox.answer(toBody: body(try sample()), requestDateMilliseconds: 0).json == #"{"status":21004}"#)
        #expect(sandbox.answer(toBody: body(try sample(), #", "password": "S3CRET""#), requestDateMilliseconds: 0).status == 21004)
        #expect(sandbox.answer(toBody: body(try sample(), #", "password": "s3cret""#), requestDateMilliseconds: 0).status == 0)
        // The environment is judged first, as Apple's endpoint does.
        let production = VerifyReceiptEndpoint(environment: .production, verifier: ReceiptVerifier(), sharedSecrets: ["s3cret"])
        #expect(production.answer(toBody: body(try sample()), requestDateMilliseconds: 0).status == 21007)
    }

    @Test func excludeOldTransactionsKeepsOneRenewalPerSubscription() throws {
        let sandbox = VerifyReceiptEndpoint(environment: .sandbox, verifier: ReceiptVerifier())
        let every = try object(sandbox.answer(toBody: body(try sample()), requestDateMilliseconds: 0))
        let latest = try object(sandbox.answer(toBody: body(try sample(), #", "exclude-old-transactions": true"#),
                                               requestDateMilliseconds: 0))
        let all = every["latest_receipt_info"] as! [[String: Any]]
        let kept = latest["latest_receipt_info"] as! [[String: Any]]
        let originals = Set(all.map { $0["original_transaction_id"] as! String })
        #expect(all.count == 9 && kept.count == originals.count)
        for entry in kept {
            let id = entry["original_transaction_id"] as! String
            let newest = all.filter { $0["original_transaction_id"] as? String == id }
                .map { Int64($0["purchase_date_ms"] as! String)! }.max()
            #expect(Int64(entry["purchase_date_ms"] as! String) == newest)
        }
        #expect((latest["receipt"] as! [String: Any])["in_app"] as? [Any] != nil)
    }

    @Test func noLatestReceiptWithoutSubscriptions() throws {
        let sandbox = VerifyReceiptEndpoint(environment: .sandbox, verifier: ReceiptVerifier())
        let bytes = try Fixtures.bytes("receipts/cbrv__sandboxReceipt.der")  // one purchase, not a subscription
        let answer = try object(sandbox.answer(toBody: body(bytes), requestDateMilliseconds: 0))
        #expect((answer["receipt"] as? [String: Any])?["in_app"] as? [Any] != nil)
        #expect(answer["status"] as? Int == 0)
        #expect(answer["latest_receipt_info"] == nil && answer["latest_receipt"] == nil)
    }
}

struct VerdictEndpointTests {
    let endpoint = VerdictEndpoint(verifier: ReceiptVerifier(policy: VerificationPolicy(bundleID: "com.example.server")))

    @Test(arguments: [
        [("bundleid", "x")], [("environment", "staging")], [("app_apple_id", "0")], [("app_apple_id", "x")],
        [("bundle_id", "a"), ("bundle_id", "b")],
    ])
    func badParametersAreRefusedByName(query: [(String, String)]) throws {
        let answer = endpoint.answer(toBody: [1, 2, 3], query: query.map { (name: $0.0, value: $0.1) })
        #expect(answer.refusal?.status == .invalidArgument)
        #expect(answer.json.hasPrefix(#"{"valid":false,"status":"RECEIPT_E_INVALID_ARGUMENT","detail":""#))
    }

    @Test func queryReplacesTheServersPolicy() throws {
        let verifier = try endpoint.verifier(for: [(name: "bundle_id", value: "com.example.other"),
                                                   (name: "environment", value: "sandbox"),
                                                   (name: "app_apple_id", value: "42")])
        #expect(verifier.policy.bundleID == "com.example.other" && verifier.policy.environment == .sandbox)
        #expect(verifier.policy.appAppleID == 42 && verifier.policy.otherBundleIDs.isEmpty)
        #expect(try endpoint.verifier(for: []) === endpoint.verifier)
    }

    @Test func unreadableBodiesAreRefusals() {
        let answer = endpoint.answer(toBody: Array("\u{0}junk".utf8), query: [])
        #expect(answer.refusal != nil && answer.status == .notAReceipt)
        #expect(endpoint.answer(toBody: [], query: []).status == .emptyInput)
    }
}

@Suite(.enabled(if: Fixtures.available, Fixtures.skipReason))
struct VerdictEndpointRealTests {
    @Test func receiptVerdictIsTheCLIsAndSharesTheCache() throws {
        let bytes = try Fixtures.bytes("receipts/rc__receiptsample1.der")
        let verifier = ReceiptVerifier(policy: VerificationPolicy(bundleID: "com.revenuecat.sampleapp"))
        let endpoint = VerdictEndpoint(verifier: verifier)
        let answer = endpoint.answer(toBody: bytes, query: [])
        #expect(answer.refusal == nil && answer.status == .ok)
        #expect(answer.json == verifier.verify(try Receipt.parse(bytes)).json())
        let before = verifier.cacheStatistics
        let other = endpoint.answer(toBody: bytes, query: [(name: "bundle_id", value: "com.example.other")])
        #expect(other.status == .bundleMismatch && other.refusal == nil)
        // The request's verifier reused the chain the server's had validated.
        #expect(verifier.cacheStatistics.hits == before.hits + 1)
    }

    @Test func severalBundleIDs() throws {
        let receipt = try Receipt.parse(try Fixtures.bytes("receipts/rc__receiptsample1.der"))
        var policy = VerificationPolicy(bundleID: "com.example.first")
        policy.otherBundleIDs = ["com.revenuecat.sampleapp"]
        #expect(ReceiptVerifier(policy: policy).verify(receipt).isValid)
        policy.otherBundleIDs = ["com.example.second"]
        let refused = ReceiptVerifier(policy: policy).verify(receipt)
        #expect(refused.status == .bundleMismatch)
        #expect(refused.firstFailure?.detail == #"bundle_id is "com.revenuecat.sampleapp", expected "com.example.first" or "com.example.second""#)
    }
}

struct JSONWriterAndBase64Tests {
    /// Every length around the 3-byte quantum and the fast loop, against Foundation.
    @Test func base64EncodeMatchesFoundation() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let expected = Data(bytes).base64EncodedString()
            #expect(bytes.withUnsafeBufferPointer { Base64.encode($0) } == expected, "length \(length)")
            var appended: [UInt8] = [0x41]
            bytes.withUnsafeBufferPointer { Base64.append($0, to: &appended) }
            #expect(appended == [0x41] + Array(expected.utf8))
        }
    }

    /// The sixteen- and eight-byte scans (JSONText.firstSpecial) must still find what
    /// needs escaping at every position, in the writer and in the reader: 40 bytes take
    /// two sixteen-byte steps, an eight-byte one and a byte at a time.
    @Test func escapesAtEveryPosition() throws {
        /// 40 a's with `inserted` at `position`, and that text written as `{"k": text}`.
        func written(_ inserted: String, at position: Int) -> (text: String, json: String) {
            var text = String(repeating: "a", count: 40)
            text.insert(contentsOf: inserted, at: text.index(text.startIndex, offsetBy: position))
            var writer = JSONWriter()
            writer.beginObject()
            writer.string("k", text)
            writer.endObject()
            return (text, writer.string)
        }
        for position in 0..<40 {
            for special in ["\"", "\\", "\n", "\u{1}", "\u{1F}"] {
                let (text, json) = written(special, at: position)
                let parsed = try JSONSerialization.jsonObject(with: Data(json.utf8)) as! [String: String]
                #expect(parsed["k"] == text)
                #expect(try JSONValue.parse(json)["k"] == .string(text), "\(position)")
                // Unescaped, the reader refuses a control character wherever it stands.
                if special.utf8.first! < 0x20 {
                    #expect(throws: ReceiptError.self) { try JSONValue.parse("{\"k\":\"\(text)\"}") }
                }
            }
            // What needs no escape is copied as it is (a space, DEL, bytes above 0x7F).
            for plain in [" ", "\u{7F}", "é"] {
                let (text, json) = written(plain, at: position)
                #expect(json == "{\"k\":\"\(text)\"}", "\(position)")
            }
        }
    }
}
