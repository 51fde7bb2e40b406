@testable import ReceiptCore
import Testing

/// The App Store Server API's rules that need no key and no server: arguments
/// checked against Apple's documentation, paths that cannot be escaped, the
/// names of verified payloads, and Retry-After.
struct ServerAPIRulesTests {
    @Test func everyCallHasAUniqueNameAndAbsolutePath() {
        let names = ServerAPICall.all.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(names.count == 36)  // Apple's library's 30 and the Advanced Commerce API's 6
        for call in ServerAPICall.all {
            #expect(call.pathTemplate.hasPrefix("/inApps/") || call.pathTemplate.hasPrefix("/advancedCommerce/v1/"),
                    "\(call.name)")
            for argument in call.pathTemplate.split(separator: "/") where argument.first == "{" {
                #expect(call.argumentNames.contains(String(argument.dropFirst().dropLast())), "\(call.name) \(argument)")
            }
        }
    }

    @Test func argumentsAreNormalizedOrRefusedByName() throws {
        let history = try ServerAPICall.named("get_transaction_history")
        let normalized = try history.normalize([
            "transactionId": .number("2000000000000001"), "startDate": .string("1700000000000"),
            "productType": .string("AUTO_RENEWABLE"), "revoked": .string("false"), "revision": .null,
        ])
        #expect(normalized["transactionId"] == .string("2000000000000001"))
        #expect(normalized["startDate"] == .number("1700000000000"))
        #expect(normalized["productType"] == .array([.string("AUTO_RENEWABLE")]))
        #expect(normalized["revoked"] == .bool(false))
        #expect(normalized["version"] == .string("v2"))
        #expect(normalized["revision"] == nil)
        // Apple documents plain millisecond times for the history: 0 is "from the beginning".
        let fromTheStart = try history.normalize(["transactionId": .string("1"), "startDate": .number("0"),
                                                  "endDate": .number("86400000")])
        #expect(fromTheStart["startDate"] == .number("0") && fromTheStart["endDate"] == .number("86400000"))
        // Notification history keeps Apple's window: nothing before the App Store.
        #expect(throws: ReceiptError.self) {
            _ = try ServerAPICall.named("get_notification_history").normalize(["startDate": .number("86400000"),
                                                                              "endDate": .number("1700000000000")])
        }
        let refusals: [([String: JSONValue], String)] = [
            (["transactionId": .string("1"), "startDate": .number("-1")], "startDate must be milliseconds since 1970, from 0"),
            (["transactionId": .string("1"), "productType": .array(Array(repeating: .string("CONSUMABLE"), count: 5))],
             "1 to 4 values"),
            (["transactionId": .string("1"), "version": .string("v3")], "version must be one of v1, v2"),
            (["transactionId": .string("1 OR 1=1")], "transactionId must be 1 to 20 digits"),
        ]
        for (arguments, detail) in refusals {
            #expect(throws: ReceiptError.self) { _ = try history.normalize(arguments) }
            do {
                _ = try history.normalize(arguments)
            } catch {
                #expect(error.status == .invalidArgument)
                #expect(error.detail.contains(detail), "\(error.detail)")
            }
        }
        let message = try ServerAPICall.named("upload_message")
        #expect(throws: ReceiptError.self) {
            _ = try message.normalize(["messageIdentifier": .string("5a2a3e5c-1b0e-4d6f-9b7a-0c1d2e3f4a5b"),
                                       "header": .string(String(repeating: "h", count: 67)), "body": .string("b")])
        }
    }

    /// JSON writes a whole number as `10`, `10.0` or `1e1` alike (JSON Schema's "integer" takes
    /// each): an integer argument takes them all, and refuses a fraction or an overflow.
    @Test func anIntegerArgumentTakesAWholeNumberHoweverWritten() throws {
        let written: [(String, Int64?)] = [
            ("10", 10), ("10.0", 10), ("10.000", 10), ("1e1", 10), ("1.5E+1", 15), ("100e-1", 10), ("-0.0", 0), ("0e-5", 0),
            ("0.000", 0), ("-20", -20), ("9223372036854775807", .max), ("9.223372036854775807e18", .max),
            ("10.5", nil), ("5e-1", nil), ("1e19", nil), ("1e400", nil), ("9223372036854775808", nil), ("1e99999999999999999999", nil),
            ("0e401", 0), ("0e99999999999999999999", 0), ("-9.223372036854775808e18", .min), ("-9.223372036854775809e18", nil),
            ("1e", nil), (".", nil), ("-", nil), ("1.2.3", nil), ("", nil),
        ]
        for (text, value) in written { #expect(JSONValue.number(text).integralValue == value, "\(text)") }
        #expect(JSONValue.string("10").integralValue == nil)
        let consumption = try ServerAPICall.named("send_consumption_information")
        let body: [String: JSONValue] = ["transactionId": .string("1"), "customerConsented": .bool(true),
                                         "sampleContentProvided": .bool(false), "deliveryStatus": .string("DELIVERED")]
        let normalized = try consumption.normalize(body.merging(["consumptionPercentage": .number("10.0")]) { $1 })
        #expect(normalized["consumptionPercentage"] == .number("10"))
        #expect(throws: ReceiptError.self) {
            _ = try consumption.normalize(body.merging(["consumptionPercentage": .number("10.5")]) { $1 })
        }
    }

    /// A refusal ends with the error Apple's server answers that argument with, where Apple names
    /// one; a member inside a body object is not its object's argument.
    @Test func refusalsNameApplesErrorForTheArgument() throws {
        let cases: [(String, [String: JSONValue], String?)] = [
            ("get_transaction_info", ["transactionId": .string("12x")], "(INVALID_TRANSACTION_ID)"),
            ("get_transaction_history", ["transactionId": .string("1"), "productType": .array([.string("BOOKS")])],
             "(INVALID_PRODUCT_TYPE)"),
            ("get_transaction_history", ["transactionId": .string("1"), "sort": .string("UP")], "(INVALID_SORT)"),
            ("get_transaction_history", ["transactionId": .string("1"), "nonsense": .number("1")], nil),
            ("upload_message", ["messageIdentifier": .string("5a2a3e5c-1b0e-4d6f-9b7a-0c1d2e3f4a5b"), "header": .string("h"),
                                "body": .string("b"), "image": .object(["imageIdentifier": .string("x"), "altText": .string("a")])], nil),
        ]
        for (name, arguments, suffix) in cases {
            do {
                _ = try ServerAPICall.named(name).normalize(arguments)
                Issue.record("\(name) \(arguments) was taken")
            } catch {
                #expect(error.status == .invalidArgument)
                if let suffix { #expect(error.detail.hasSuffix(suffix), "\(error.detail)") } else {
                    #expect(!error.detail.hasSuffix(")") || !error.detail.contains("(INVALID"), "\(error.detail)")
                }
            }
        }
    }

    @Test func aPathArgumentCannotLeaveItsSegment() {
        #expect(PercentEncoding.encoded("a/../b?c=d#e f") == "a%2F..%2Fb%3Fc%3Dd%23e%20f")
        #expect(PercentEncoding.encoded("com.example-app_1~") == "com.example-app_1~")
        #expect(PercentEncoding.encoded("é") == "%C3%A9")
    }

    @Test func verifiedPayloadsAreNamedWithoutSignedInSnakeCase() {
        #expect(SignedMembers.decodedName(of: "signedTransactions") == "transactions")
        #expect(SignedMembers.decodedName(of: "signedTransactionInfo") == "transaction_info")
        #expect(SignedMembers.decodedName(of: "signedAppTransactionInfo") == "app_transaction_info")
        #expect(SignedMembers.decodedName(of: "signedPayload") == "payload")
        #expect(SignedMembers.decodedName(of: "signedDate") == "date")  // a number there: left alone by its type
        #expect(SignedMembers.decodedName(of: "signed") == nil)
        #expect(SignedMembers.decodedName(of: "signedness") == nil)
        #expect(SignedMembers.decodedName(of: "transactions") == nil)
    }

    @Test func retryAfterIsApplesInstantInMillisecondsSecondsOrAnHTTPDate() {
        let now: Int64 = 1_445_412_480  // Wed, 21 Oct 2015 07:28:00 GMT
        #expect(RetryAfter.milliseconds("120", nowSeconds: now) == 120_000)
        #expect(RetryAfter.milliseconds(" 3 ", nowSeconds: now) == 3000)
        #expect(RetryAfter.milliseconds("Wed, 21 Oct 2015 07:28:30 GMT", nowSeconds: now) == 30_000)
        #expect(RetryAfter.milliseconds("Wed, 21 Oct 2015 07:27:00 GMT", nowSeconds: now) == 0)
        #expect(RetryAfter.milliseconds("99999999999", nowSeconds: now) == RetryAfter.maxSeconds * 1000)
        // Apple's form: when the quota returns, in milliseconds since 1970.
        #expect(RetryAfter.milliseconds("1445412480250", nowSeconds: now) == 250)
        #expect(RetryAfter.milliseconds("1445416080000", nowSeconds: now) == 3_600_000)  // the next hour
        #expect(RetryAfter.milliseconds("1445412470000", nowSeconds: now) == 0)  // already past
        #expect(RetryAfter.milliseconds("9445412480000", nowSeconds: now) == RetryAfter.maxSeconds * 1000)
        #expect(RetryAfter.milliseconds("1234567890123456789", nowSeconds: now) == nil)  // 19 digits: unreadable
        for unreadable in ["", "-1", "1.5", "soon", "Wed, 32 Oct 2015 07:28:00 GMT", "Wed, 21 Oct 2015 07:28:00 PST"] {
            #expect(RetryAfter.milliseconds(unreadable, nowSeconds: now) == nil, "\(unreadable)")
        }
        #expect(RetryAfter.milliseconds(nil, nowSeconds: now) == nil)
    }

    @Test func failuresSayWhetherToSendAgain() {
        let limited = ServerAPIFailure(httpStatus: 429, body: Array(#"{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}"#.utf8),
                                       retryAfterMilliseconds: 2000)
        #expect(limited.isRetryable && limited.errorName == "RATE_LIMIT_EXCEEDED")
        #expect(limited.summary == "HTTP 429, error 4290000 RATE_LIMIT_EXCEEDED: Rate limit exceeded.; retry after 2000 ms")
        let missing = ServerAPIFailure(httpStatus: 404, body: Array(#"{"errorCode":4040010}"#.utf8), retryAfterMilliseconds: nil)
        #expect(!missing.isRetryable && missing.errorName == "TRANSACTION_ID_NOT_FOUND")
        let retryableNotFound = ServerAPIFailure(httpStatus: 404, body: Array(#"{"errorCode":4040006}"#.utf8),
                                                 retryAfterMilliseconds: nil)
        #expect(retryableNotFound.isRetryable)
        let html = ServerAPIFailure(httpStatus: 502, body: Array("<html>bad gateway</html>".utf8), retryAfterMilliseconds: nil)
        #expect(html.isRetryable && html.errorCode == nil)
    }
}
