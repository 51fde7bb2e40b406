/// One call of the App Store Server API as a loop without I/O, like the
/// verifyReceipt exchange: the transport sends `request`, hands back each HTTP
/// answer to `handle`, and does what it says. Then, for paged calls,
/// `nextPage()` gives the request for the next page until there is none.
///
/// Rules: a 429 is sent again after its `Retry-After` (or 1 s, doubling, when it
/// has none); a 5xx or an error Apple calls retryable, after 500 ms, doubling;
/// at most `retries` times in a row, and never when the wait would be longer than
/// `maxDelayMilliseconds` (the failure then carries Apple's wait). A request that
/// got no answer (transport failure) is sent again only if it is idempotent
/// (not POST). Every other error ends the call. A success whose signed members do
/// not all verify throws, naming the member.
///
/// Paging stops at `maxPages`, and when Apple repeats a cursor, so that a server
/// that always says `hasMore` cannot keep a caller looping. The cursors seen are kept
/// as their SHA-256 digests: a cursor may be 4,096 bytes, and a server that pages to
/// the limit with a new one each time would otherwise make the exchange hold 400 MB.
///
/// Production→sandbox fallback, opt-in (`fallBack(to:)`): when production answers
/// that it does not know the transaction a call names (404, TRANSACTION_ID_NOT_FOUND
/// or ORIGINAL_TRANSACTION_ID_NOT_FOUND) before any page, the same call goes once to the
/// sandbox client, whose verifier expects the sandbox; its answer says
/// `"answered_by": "sandbox"`. App Review buys in the sandbox against a production
/// backend, which is why Apple suggests it.
public struct ServerAPIExchange: Sendable {
    public enum Action: Sendable {
        /// Send `request` after `delayMilliseconds`.
        case send(ServerAPIRequest, delayMilliseconds: Int64)
        /// The answer, every signed member verified.
        case answered(ServerAPISuccess)
        /// Apple refused, or did not answer in the retries allowed.
        case failed(ServerAPIFailure)
    }

    public static let defaultRetries = 3
    public static let defaultMaxDelayMilliseconds: Int64 = 60_000
    public static let defaultMaxPages = 100_000

    /// The client whose request this is: the sandbox's after a fallback.
    public private(set) var client: ServerAPIClient
    public let call: ServerAPICall
    /// Whether the sandbox was asked after production did not know the transaction.
    public private(set) var fellBackToSandbox = false
    private var sandboxFallback: ServerAPIClient?
    public private(set) var request: ServerAPIRequest
    /// Pages answered so far.
    public private(set) var pages = 0
    private var arguments: [String: JSONValue]
    private let retries: Int
    private let maxDelayMilliseconds: Int64
    private let maxPages: Int
    private var retriesDone = 0
    private var next: (name: String, value: JSONValue)?
    /// The SHA-256 of each cursor sent (32 bytes each, whatever the cursor's length).
    private var cursorsSeen: Set<[UInt8]> = []

    public init(client: ServerAPIClient, call: ServerAPICall, arguments: [String: JSONValue],
                retries: Int = defaultRetries, maxDelayMilliseconds: Int64 = defaultMaxDelayMilliseconds,
                maxPages: Int = defaultMaxPages, nowSeconds: Int64? = nil) throws(ReceiptError) {
        guard retries >= 0, maxDelayMilliseconds >= 0, maxPages >= 1 else {
            throw ReceiptError(.invalidArgument, "retries and the longest wait are at least 0, pages at least 1")
        }
        self.client = client
        self.call = call
        self.arguments = arguments
        self.retries = retries
        self.maxDelayMilliseconds = maxDelayMilliseconds
        self.maxPages = maxPages
        request = try client.request(call, arguments: arguments, nowSeconds: nowSeconds)
    }

    /// Apple's codes for "no such transaction" (ServerAPIErrorCode), the ones a fallback answers.
    static let transactionNotFound: Set<Int64> = [4040005, 4040010]

    /// Asks `sandbox` when production does not know the transaction (see above): for a
    /// production exchange, before its first answer, with a sandbox client of the same
    /// app. A call that names no transaction in its path never falls back.
    public mutating func fallBack(to sandbox: ServerAPIClient) throws(ReceiptError) {
        guard client.environment == .production, sandbox.environment == .sandbox else {
            throw ReceiptError(.invalidArgument, "a fallback goes from a production client to a sandbox one; "
                               + "got \(client.environment.rawValue) to \(sandbox.environment.rawValue)")
        }
        guard sandbox.credentials.bundleID == client.credentials.bundleID else {
            throw ReceiptError(.invalidArgument, "the sandbox client is for bundle id \(quoted(sandbox.credentials.bundleID)), "
                               + "not \(quoted(client.credentials.bundleID))")
        }
        guard pages == 0, retriesDone == 0 else {
            throw ReceiptError(.invalidArgument, "a fallback is set before the first answer")
        }
        // A call that names no transaction has nothing production could miss: it never falls back.
        sandboxFallback = call.asksByTransactionID ? sandbox : nil
    }

    /// What to do after the HTTP answer to `request`. HTTP status 0 means the
    /// request got no answer (`body` may say why).
    public mutating func handle(httpStatus: Int, retryAfter: String? = nil, body: [UInt8],
                                nowSeconds: Int64? = nil) throws(ReceiptError) -> Action {
        let failure: ServerAPIFailure
        if httpStatus == 0 {
            failure = ServerAPIFailure(httpStatus: 0, errorCode: nil,
                                       errorMessage: "no answer from \(client.baseURL)" + (body.isEmpty ? "" : ": \(String(decoding: body.prefix(200), as: UTF8.self))"),
                                       retryAfterMilliseconds: nil)
            guard call.method != "POST" else { return .failed(failure) }
        } else {
            switch try client.read(call, arguments: arguments, httpStatus: httpStatus, retryAfter: retryAfter, body: body, nowSeconds: nowSeconds) {
            case .success(let success):
                retriesDone = 0
                pages += 1
                next = success.nextPage
                return .answered(fellBackToSandbox ? success.answeredBy(.sandbox) : success)
            case .failure(let refused):
                if let sandbox = sandboxFallback, pages == 0, refused.httpStatus == 404,
                   let code = refused.errorCode, Self.transactionNotFound.contains(code) {
                    sandboxFallback = nil
                    fellBackToSandbox = true
                    client = sandbox
                    retriesDone = 0
                    request = try client.request(call, arguments: arguments, nowSeconds: nowSeconds)
                    return .send(request, delayMilliseconds: 0)
                }
                guard refused.isRetryable else { return .failed(refused) }
                failure = refused
            }
        }
        let backoff: Int64 = (failure.httpStatus == 429 ? 1000 : 500) << Int64(min(retriesDone, 10))
        let delay = failure.retryAfterMilliseconds ?? backoff
        guard retriesDone < retries, delay <= maxDelayMilliseconds else { return .failed(failure) }
        retriesDone += 1
        request = try client.request(call, arguments: arguments, nowSeconds: nowSeconds)
        return .send(request, delayMilliseconds: delay)
    }

    /// The request for the page after the last answer, or nil when it was the last.
    /// Throws when Apple repeats a cursor or the pages exceed `maxPages`.
    public mutating func nextPage(nowSeconds: Int64? = nil) throws(ReceiptError) -> ServerAPIRequest? {
        guard let (name, value) = next else { return nil }
        next = nil
        let cursor = ServerAPIValueKind.queryText(value)
        guard cursorsSeen.insert(Digest.sha256(Array(cursor.utf8))).inserted else {
            throw ReceiptError(.limitExceeded, "\(call.name): the answer repeats the \(name) of an earlier page; "
                               + "stopped after \(pages) pages")
        }
        guard pages < maxPages else {
            throw ReceiptError(.limitExceeded, "\(call.name): more than \(maxPages) pages; stopped")
        }
        arguments[name] = value
        request = try client.request(call, arguments: arguments, nowSeconds: nowSeconds)
        return request
    }
}
