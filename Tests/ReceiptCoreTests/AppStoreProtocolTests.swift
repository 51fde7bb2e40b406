import Foundation
import ReceiptCore
import Testing

struct AppStoreProtocolTests {
    @Test func nextStepFollowsTheGuide() throws {
        func step(_ status: Int64, retryable: String = "") throws -> NextStep {
            try VerifyReceiptResponse.parse("{\"status\": \(status)\(retryable)}").nextStep
        }
        #expect(try step(0) == .accept)
        #expect(try step(21006) == .accept)
        #expect(try step(21007) == .retryInSandbox)
        #expect(try step(21008) == .retryInProduction)
        #expect(try step(21005) == .retryLater)
        #expect(try step(21100) == .retryLater)
        #expect(try step(21199) == .retryLater)
        #expect(try step(21200) == .reject)
        #expect(try step(21003, retryable: ", \"is-retryable\": true") == .reject)  // never retried
        #expect(try step(21004, retryable: ", \"is_retryable\": true") == .reject)
        #expect(try step(21002) == .reject)
        #expect(try step(21010) == .reject)
        #expect(try step(21002, retryable: ", \"is_retryable\": true") == .retryLater)
    }

    @Test func bothRetryableSpellingsAndEveryRenewalField() throws {
        let text = """
            {"status": 21199, "is_retryable": 1, "environment": "Sandbox",
             "latest_receipt_info": [{"transaction_id": "1"}],
             "pending_renewal_info": [{"original_transaction_id": "7", "product_id": "m",
               "auto_renew_product_id": "y", "auto_renew_status": "1", "expiration_intent": "2",
               "is_in_billing_retry_period": "1", "price_consent_status": "0",
               "grace_period_expires_date_ms": "1600000000000"}]}
            """
        let response = try VerifyReceiptResponse.parse(text)
        #expect(response.isRetryable == true && response.environment == .sandbox)
        #expect(response.latestReceiptInfo.count == 1)
        let renewal = try #require(response.pendingRenewalInfo.first)
        #expect(renewal.originalTransactionID == "7" && renewal.productID == "m" && renewal.autoRenewProductID == "y")
        #expect(renewal.autoRenewStatus == true && renewal.expirationIntent == 2 && renewal.isInBillingRetryPeriod == true)
        #expect(renewal.priceConsentStatus == 0 && renewal.gracePeriodExpiresDateMilliseconds == 1_600_000_000_000)
        #expect(try VerifyReceiptResponse.parse("{\"status\":0,\"is-retryable\":false}").isRetryable == false)
    }

    @Test func malformedResponsesAreErrorsNotGuesses() {
        for text in ["", "{", "{\"status\": \"zero\"}", "{\"status\": 0} trailing", "[1,]", "{\"a\": 01}", "<html>"] {
            #expect(throws: ReceiptError.self, "\(text)") { try VerifyReceiptResponse.parse(text) }
        }
    }

    @Test func jsonStringsDecodeEscapes() throws {
        let value = try JSONValue.parse(#"{"s": "a\"b\\c\u00e9\ud83d\ude00\n"}"#)
        #expect(value["s"]?.stringValue == "a\"b\\cé😀\n")
        #expect(throws: ReceiptError.self) { try JSONValue.parse(String(repeating: "[", count: 100)) }
    }

    /// Parsers differ on a repeated name (first wins, last wins): refusing it leaves
    /// nothing for two readers of one document to disagree on.
    @Test func aRepeatedMemberNameIsRefused() {
        do {
            _ = try JSONValue.parse(#"{"status": 0, "status": 21003}"#)
            Issue.record("a repeated name was accepted")
        } catch {
            #expect(error.status == .duplicateMember)
            #expect(error.detail.contains("twice"))
        }
        #expect((try? JSONValue.parse(#"{"a": {"status": 0}, "status": 0}"#)) != nil)
    }

    @Test func requestBodyCarriesBase64AndOptions() throws {
        let receipt = DER.receipt(attributes: DER.validAppAttributes)
        let request = try VerifyReceiptRequest(receipt: receipt, password: "s3cr3t", excludeOldTransactions: true)
        let body = try JSONValue.parse(request.jsonBody)
        #expect(body["receipt-data"]?.stringValue == Data(receipt).base64EncodedString())
        #expect(body["password"]?.stringValue == "s3cr3t")
        #expect(body["exclude-old-transactions"]?.boolValue == true)
        #expect(throws: ReceiptError.self) { try VerifyReceiptRequest(receipt: Array("junk".utf8)) }
    }

    @Test func localAnswersMalformedAndUnauthenticated() throws {
        let verifier = ReceiptVerifier()
        #expect(LocalVerifyReceipt.response(for: [1, 2, 3], verifier: verifier, expecting: .production) == "{\"status\":21002}")
        let unsigned = DER.receipt(attributes: DER.validAppAttributes)  // receipt_type Production
        #expect(LocalVerifyReceipt.response(for: unsigned, verifier: verifier, expecting: .production) == "{\"status\":21003}")
        #expect(LocalVerifyReceipt.response(for: unsigned, verifier: verifier, expecting: .sandbox) == "{\"status\":21008}")
    }

    @Test func catalogFromJSON() throws {
        let catalog = try EntitlementsJSON.catalog(#"{"kinds": {"a": "consumable"}, "non_renewing_durations_ms": {"s": 1000}}"#)
        #expect(catalog == ProductCatalog(kinds: ["a": .consumable], nonRenewingDurations: ["s": 1000]))
        #expect(throws: ReceiptError.self) { try EntitlementsJSON.catalog(#"{"kinds": {"a": "forever"}}"#) }
        #expect(throws: ReceiptError.self) { try EntitlementsJSON.catalog(#"{"non_renewing_durations_ms": {"s": -1}}"#) }
    }
}

@Suite(.enabled(if: Fixtures.available, Fixtures.skipReason))
struct LocalVerifyReceiptRealTests {
    /// The sample's recorded App Store answer, field by field, for everything a receipt holds.
    @Test func matchesTheAppStoresAnswer() throws {
        let bytes = try Fixtures.bytes("receipts/rc__receiptsample1.der")
        let ours = try JSONSerialization.jsonObject(with: Data(
            LocalVerifyReceipt.response(for: bytes, verifier: ReceiptVerifier(), expecting: .sandbox).utf8)) as! [String: Any]
        let apple = try JSONSerialization.jsonObject(
            with: Data(try Fixtures.bytes("responses/rc__verifyReceiptSample1.json"))) as! [String: Any]
        #expect(ours["status"] as? Int == 0 && apple["status"] as? Int == 0)
        #expect(ours["environment"] as? String == apple["environment"] as? String)
        #expect(ours["latest_receipt"] as? String == Data(bytes).base64EncodedString())
        let mine = ours["latest_receipt_info"] as! [[String: Any]]
        let theirs = apple["latest_receipt_info"] as! [[String: Any]]
        #expect(mine.count == theirs.count)
        for (entry, expected) in zip(mine, theirs) {
            for (key, value) in expected where key != "subscription_group_identifier" {
                #expect(entry[key] as? String == value as? String, "latest_receipt_info.\(key)")
            }
            #expect(Set(entry.keys) == Set(expected.keys).subtracting(["subscription_group_identifier"]))
        }
        #expect((ours["receipt"] as? [String: Any])?["bundle_id"] as? String == "com.revenuecat.sampleapp")
        #expect(ours["pending_renewal_info"] == nil)  // only Apple's servers know renewal intent
    }

    @Test func environmentMismatchesAnswerLikeApple() throws {
        let sandbox = try Fixtures.bytes("receipts/rc__receiptsample1.der")
        let production = try Fixtures.bytes("receipts/tp__receipt-production.der")
        let verifier = ReceiptVerifier()
        #expect(LocalVerifyReceipt.response(for: sandbox, verifier: verifier, expecting: .production) == "{\"status\":21007}")
        #expect(LocalVerifyReceipt.response(for: production, verifier: verifier, expecting: .sandbox) == "{\"status\":21008}")
        #expect(LocalVerifyReceipt.response(for: production, verifier: verifier, expecting: .production).hasPrefix("{\"status\":0,"))
    }
}

struct VerifyReceiptExchangeTests {
    private func exchange(retries: Int = 2, sandbox: Bool = false) throws -> VerifyReceiptExchange {
        VerifyReceiptExchange(request: try VerifyReceiptRequest(receipt: DER.receipt(attributes: DER.validAppAttributes)),
                              startIn: sandbox ? .sandbox : .production, productionURL: "p", sandboxURL: "s",
                              retries: retries)
    }

    @Test func movesOnceBetweenEnvironments() throws {
        var conversation = try exchange()
        #expect(conversation.url == "p")
        #expect(conversation.handle(httpStatus: 200, body: #"{"status":21007}"#) == .send(url: "s", delayMilliseconds: 0))
        #expect(conversation.handle(httpStatus: 200, body: #"{"status":21008}"#) == .rejected(status: 21008))
    }

    @Test func retriesWithGrowingDelaysThenGivesUp() throws {
        var conversation = try exchange(retries: 2)
        #expect(conversation.handle(httpStatus: 502, body: "") == .send(url: "p", delayMilliseconds: 400))
        #expect(conversation.handle(httpStatus: 200, body: #"{"status":21005}"#) == .send(url: "p", delayMilliseconds: 800))
        guard case .unavailable = conversation.handle(httpStatus: 200, body: #"{"status":21009}"#) else {
            Issue.record("a third retryable answer was retried past the limit")
            return
        }
    }

    @Test func acceptsAndRejectsWithoutRetrying() throws {
        var conversation = try exchange(sandbox: true)
        #expect(conversation.url == "s")
        #expect(conversation.handle(httpStatus: 200, body: #"{"status":21004,"is-retryable":true}"#) == .rejected(status: 21004))
        #expect(conversation.handle(httpStatus: 200, body: #"{"status":0}"#) == .accepted(status: 0))
        guard case .unavailable = conversation.handle(httpStatus: 0, body: "timed out") else {
            Issue.record("a transport failure was not reported as unavailable")
            return
        }
    }
}
