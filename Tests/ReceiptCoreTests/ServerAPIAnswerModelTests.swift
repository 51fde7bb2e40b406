@testable import ReceiptCore
import Testing

/// An answer is read through Apple's model of it: members of the wrong type, a
/// required signed member absent or null, and unsigned members under the names of
/// verified payloads refuse the answer; members outside the model are dropped.
/// (Signed members that verify, or not, are tested through the mock and the
/// red team's answers, which need a test CA: Tests/python/test_hardening4.py.)
struct ServerAPIAnswerModelTests {
    let verifier = ReceiptVerifier(trust: .appleRoot, policy: VerificationPolicy(bundleID: "com.example.app",
                                                                                environment: .sandbox))

    func read(_ call: String, _ body: String, arguments: [String: JSONValue] = [:]) throws(ReceiptError) -> JSONValue {
        let answer = try ServerAPIAnswer.read(try ServerAPICall.named(call), arguments: arguments, httpStatus: 200,
                                              retryAfter: nil, body: Array(body.utf8), verifier: verifier, nowSeconds: 0)
        guard case .success(let success) = answer else { throw ReceiptError(.absent, "not a success") }
        return success.document
    }

    func refusal(_ call: String, _ body: String) -> ReceiptError? {
        do {
            _ = try read(call, body)
            return nil
        } catch {
            return error
        }
    }

    @Test func unsignedDataUnderPayloadNamesIsNeverHandedOut() {
        let cases: [(String, String, ReceiptStatus, String)] = [
            ("get_transaction_history", #"{"hasMore":false,"transactions":[{"transactionId":"1"}]}"#, .badField,
             "signedTransactions is absent"),
            ("get_transaction_history", #"{"signedTransactions":null,"transactions":[]}"#, .badField, "signedTransactions is null"),
            ("get_transaction_history", #"{"signedTransactions":{},"transactions":[]}"#, .badField, "signedTransactions is an object"),
            ("get_transaction_history", #"{"signedTransactions":[],"transactions":[{"x":1}]}"#, .unsignedMember, "transactions"),
            ("get_transaction_info", #"{"transaction_info":{"transactionId":"1"}}"#, .badField, "signedTransactionInfo is absent"),
            ("get_all_subscription_statuses", #"{"data":[{"lastTransactions":[{"renewal_info":{}}]}]}"#, .badField,
             "data[0].lastTransactions[0].signedTransactionInfo is absent"),
            ("get_notification_history", #"{"notificationHistory":[{"payload":{}}]}"#, .badField,
             "notificationHistory[0].signedPayload is absent"),
            ("get_transaction_history", #"{"hasMore":1,"signedTransactions":[]}"#, .badField, "hasMore is a number, not a boolean"),
            ("get_transaction_history", #"{"appAppleId":"hi","signedTransactions":[]}"#, .badField,
             "appAppleId is a string, not an integer"),
            ("get_transaction_history", #"{"signedTransactions":[7]}"#, .badField, "signedTransactions[0] is a number"),
            ("get_status_of_subscription_renewal_date_extensions", #"{"complete":"yes"}"#, .badField, "complete is a string"),
        ]
        for (call, body, status, detail) in cases {
            let error = refusal(call, body)
            #expect(error?.status == status, "\(call) \(body): \(String(describing: error))")
            #expect(error?.detail.contains(detail) == true, "\(call) \(body): \(error?.detail ?? "accepted")")
        }
    }

    @Test func membersOutsideTheModelAreDroppedAndTheRestKept() throws {
        let page = try read("get_transaction_history",
                            #"{"hasMore":false,"revision":"r1","appAppleId":12,"signedTransactions":[],"extra":{"expiresDate":1}}"#)
        #expect(page == .object(["hasMore": .bool(false), "revision": .string("r1"), "appAppleId": .number("12"),
                                 "signedTransactions": .array([]), "transactions": .array([])]))
        #expect(try read("set_app_account_token", #"{"anything":1}"#) == .object([:]))
        let status = try read("get_status_of_subscription_renewal_date_extensions",
                              #"{"requestIdentifier":"r","complete":true,"completeDate":1,"succeededCount":2,"failedCount":0,"x":1}"#)
        #expect(status["x"] == nil && status["complete"] == .bool(true) && status["succeededCount"] == .number("2"))
    }

    @Test func baseURLsThatWouldGiveATokenAwayAreRefused() {
        for url in ["http://api.storekit.apple.com", "http://10.0.0.1:8080/x", "http://127.0.0.1.evil.example",
                    "https://user:pass@proxy.example", "http://localhost.example"] {
            #expect(throws: ReceiptError.self, "\(url)") { _ = try ServerAPIClient.checkedBaseURL(url) }
        }
        for url in ["https://api.storekit.apple.com", "http://127.0.0.1:8080", "http://localhost", "http://[::1]:9/x",
                    "http://127.255.0.1"] {
            #expect((try? ServerAPIClient.checkedBaseURL(url)) != nil, "\(url)")
        }
    }

    @Test func dotSegmentsAreNoIdentifiers() throws {
        let lookUp = try ServerAPICall.named("look_up_order_id")
        for dots in [".", ".."] {
            #expect(throws: ReceiptError.self) { _ = try lookUp.normalize(["orderId": .string(dots)]) }
        }
        #expect(try lookUp.normalize(["orderId": .string("...")])["orderId"] == .string("..."))
    }
}
