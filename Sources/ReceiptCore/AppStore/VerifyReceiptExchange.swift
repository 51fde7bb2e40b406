/// One conversation with verifyReceipt, as a state machine without I/O: it says
/// where to send which body, and, given each HTTP answer, what to do next. The
/// CLI and the Python binding only carry the bytes, so the redirect and retry
/// rules exist once, here.
///
/// Rules (docs/FORMAT.md §5): start in production or the sandbox; on 21007/21008 move once
/// to the other environment; on 21005, 21009, 21100–21199, `is-retryable` or HTTP
/// 5xx wait (200 ms, doubling) and retry up to `retries` times; never retry 21003
/// or 21004; a body that is not verifyReceipt JSON ends the exchange.
public struct VerifyReceiptExchange: Sendable {
    public enum Action: Sendable, Equatable {
        /// Send `body` to `url` after waiting `delayMilliseconds`.
        case send(url: String, delayMilliseconds: Int)
        /// The App Store accepted the receipt (0 or 21006); the body is its answer.
        case accepted(status: Int64)
        /// The App Store answered no.
        case rejected(status: Int64)
        /// No usable answer; the text says why.
        case unavailable(String)
    }

    public let body: String
    public private(set) var url: String
    private let urls: [AppStoreEnvironment: String]
    private var switchedEnvironment = false
    private var retriesLeft: Int
    private var retriesDone = 0

    public init(request: VerifyReceiptRequest, startIn environment: AppStoreEnvironment = .production,
                productionURL: String? = nil, sandboxURL: String? = nil, retries: Int = 2) {
        body = request.jsonBody
        urls = [.production: productionURL ?? AppStoreEnvironment.production.endpoint,
                .sandbox: sandboxURL ?? AppStoreEnvironment.sandbox.endpoint]
        url = urls[environment]!
        retriesLeft = max(0, retries)
    }

    /// What to do after an HTTP answer to the last request. HTTP status 0 means the
    /// request failed in transport.
    public mutating func handle(httpStatus: Int, body text: String) -> Action {
        if httpStatus == 0 { return .unavailable("\(url): no answer (\(text.isEmpty ? "transport error" : text))") }
        guard httpStatus < 500 else { return retry(because: "HTTP \(httpStatus)") }
        let response: VerifyReceiptResponse
        do throws(ReceiptError) {
            response = try VerifyReceiptResponse.parse(text)
        } catch {
            return .unavailable("\(url) answered HTTP \(httpStatus) with no verifyReceipt JSON: \(error.detail)")
        }
        switch response.nextStep {
        case .accept:
            return .accepted(status: response.status)
        case .retryInSandbox where !switchedEnvironment, .retryInProduction where !switchedEnvironment:
            switchedEnvironment = true
            url = urls[response.nextStep == .retryInSandbox ? .sandbox : .production]!
            return .send(url: url, delayMilliseconds: 0)
        case .retryLater:
            return retry(because: "status \(response.status)")
        default:
            return .rejected(status: response.status)
        }
    }

    private mutating func retry(because reason: String) -> Action {
        guard retriesLeft > 0 else {
            return .unavailable("\(url) still answers \(reason) after \(retriesDone) retries")
        }
        retriesLeft -= 1
        retriesDone += 1
        return .send(url: url, delayMilliseconds: 200 << min(retriesDone, 6))
    }
}
