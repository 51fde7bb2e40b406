import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import ReceiptCore

/// The App Store Server API over AsyncHTTPClient: the transport of
/// ReceiptCore's ServerAPIExchange, and nothing else. Requests, the checking of
/// arguments, the reading and verification of answers, retries and paging are the
/// core's; this type sends bytes and sleeps when told to.
///
/// Never linked into libreceipt.so: a Swift server that wants the API depends on
/// this product.
public final class AppStoreServerAPIClient: Sendable {
    public let api: ServerAPIClient
    public let httpClient: HTTPClient
    public let retries: Int
    public let timeout: TimeAmount
    /// Asked when production does not know a call's transaction (ServerAPIExchange.fallBack(to:)); opt-in.
    public let sandboxFallback: ServerAPIClient?

    /// `httpClient` defaults to one that follows no redirect (BoundedExchange);
    /// pass your own for a proxy, TLS settings or connection limits, and make it
    /// refuse redirects too (`redirectConfiguration: .disallow`): a followed
    /// redirect carries the bearer token to the host it names. `timeout` bounds
    /// each whole exchange, body included. `sandboxFallback`, for a production `api`: the
    /// sandbox client a call that names a transaction production does not know goes to.
    public init(_ api: ServerAPIClient, httpClient: HTTPClient = BoundedExchange.noRedirects, retries: Int = ServerAPIExchange.defaultRetries,
                timeout: TimeAmount = .seconds(30), sandboxFallback: ServerAPIClient? = nil) {
        self.api = api
        self.httpClient = httpClient
        self.retries = retries
        self.timeout = timeout
        self.sandboxFallback = sandboxFallback
    }

    /// Made from what App Store Connect gives (the key's PEM, key id, issuer id, bundle id).
    public convenience init(signingKey: [UInt8], keyID: String, issuerID: String, bundleID: String,
                            environment: ReceiptEnvironment, baseURL: String? = nil, verifier: ReceiptVerifier? = nil,
                            httpClient: HTTPClient = BoundedExchange.noRedirects) throws(ReceiptError) {
        let credentials = try ServerAPICredentials(privateKeyPEM: signingKey, keyID: keyID, issuerID: issuerID, bundleID: bundleID)
        self.init(try ServerAPIClient(credentials: credentials, environment: environment, baseURL: baseURL, verifier: verifier),
                  httpClient: httpClient)
    }

    /// One call's first (or only) answer, every signed member verified.
    public func call(_ name: String, _ arguments: [String: JSONValue] = [:]) async throws -> JSONValue {
        for try await page in pages(name, arguments) { return page.document }
        throw ReceiptError(.absent, "\(name): no answer")
    }

    /// Every page of a call, in order; the stream ends after the last.
    /// Throws `ServerAPIError` when Apple refuses, `ReceiptError` when an answer does not verify.
    /// `pace`, when given, is awaited before each request is sent (retries and pages too):
    /// a caller's budget of calls (`receipt import`).
    public func pages(_ name: String, _ arguments: [String: JSONValue] = [:],
                      pace: (@Sendable () async throws -> Void)? = nil) -> AsyncThrowingStream<ServerAPISuccess, Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    var exchange = try ServerAPIExchange(client: api, call: try ServerAPICall.named(name),
                                                         arguments: arguments, retries: retries)
                    if let sandboxFallback { try exchange.fallBack(to: sandboxFallback) }
                    while true {
                        try await pace?()
                        let (status, retryAfter, body) = await send(exchange.request)
                        switch try exchange.handle(httpStatus: status, retryAfter: retryAfter, body: body) {
                        case .send(_, let delay):
                            try await Task.sleep(for: .milliseconds(delay))
                            continue
                        case .failed(let failure):
                            throw ServerAPIError(failure)
                        case .answered(let page):
                            continuation.yield(page)
                            guard try exchange.nextPage() != nil else { return continuation.finish() }
                        }
                    }
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// (HTTP status, Retry-After, body); status 0 with the reason as body when no answer came.
    private func send(_ request: ServerAPIRequest) async -> (Int, String?, [UInt8]) {
        var http = HTTPClientRequest(url: request.url)
        http.method = HTTPMethod(rawValue: request.method)
        for header in request.headers { http.headers.add(name: header.name, value: header.value) }
        if !request.body.isEmpty { http.body = .bytes(ByteBuffer(bytes: request.body)) }
        do {
            let answer = try await BoundedExchange.send(http, with: httpClient, timeout: timeout,
                                                        maxBytes: ServerAPIAnswer.maxBodyBytes)
            return (answer.status, answer.headers.first(name: "Retry-After"), answer.body)
        } catch {
            return (0, nil, Array(BoundedExchange.reason(error).utf8))
        }
    }
}

/// Apple refused the request, or gave no answer in the retries allowed.
public struct ServerAPIError: Error, CustomStringConvertible, Sendable {
    public let failure: ServerAPIFailure
    public init(_ failure: ServerAPIFailure) { self.failure = failure }
    public var description: String { failure.summary }
}
