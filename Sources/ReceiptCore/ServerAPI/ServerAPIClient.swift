#if canImport(Glibc)
import Glibc
#endif

/// The App Store Server API without a transport: credentials, the host, and the
/// verifier of every signed member. It builds each request and reads each answer;
/// the caller's HTTP client carries the bytes (ServerAPIExchange says when to
/// send what). Immutable once made and safe to share between threads.
public final class ServerAPIClient: Sendable {
    public let environment: ReceiptEnvironment
    /// Requests go to this URL plus the call's path.
    public let baseURL: String
    public let verifier: ReceiptVerifier
    public let tokens: ServerAPITokenSource
    public var credentials: ServerAPICredentials { tokens.credentials }

    /// Apple's hosts (since 2026-05-05): production and the sandbox. The local
    /// testing environment has no public host; it needs `baseURL`.
    public static func appleBaseURL(_ environment: ReceiptEnvironment) -> String? {
        switch environment {
        case .production: "https://api.storekit.apple.com"
        case .sandbox: "https://api.storekit-sandbox.apple.com"
        case .xcode, .localTesting: nil
        }
    }

    /// `baseURL` replaces Apple's host (a mock, a proxy, the local testing
    /// environment). `verifier` defaults to one that trusts only Apple Root CA - G3
    /// and expects the credentials' bundle id and `environment`; a production
    /// client that reads notifications or app transactions also needs the app's
    /// Apple id, so pass a verifier with it.
    public init(credentials: ServerAPICredentials, environment: ReceiptEnvironment, baseURL: String? = nil,
                verifier: ReceiptVerifier? = nil, tokens: ServerAPITokenSource? = nil) throws(ReceiptError) {
        guard environment != .xcode else {
            throw ReceiptError(.invalidArgument, "Xcode's StoreKit testing has no App Store Server API; "
                               + "use production, sandbox or local-testing")
        }
        guard let base = baseURL ?? Self.appleBaseURL(environment) else {
            throw ReceiptError(.invalidArgument, "the local-testing environment has no public host: give its base URL")
        }
        self.baseURL = try Self.checkedBaseURL(base)
        self.environment = environment
        self.verifier = verifier ?? ReceiptVerifier(trust: .appleRoot, policy: VerificationPolicy(
            bundleID: credentials.bundleID, environment: environment))
        if let tokens { self.tokens = tokens } else { self.tokens = try ServerAPITokenSource(credentials) }
    }

    /// The request for `call` with `arguments` (Apple's member names), checked
    /// first: unknown, missing or malformed arguments throw and nothing is built.
    public func request(_ call: ServerAPICall, arguments: [String: JSONValue],
                        nowSeconds: Int64? = nil) throws(ReceiptError) -> ServerAPIRequest {
        let normalized = try call.normalize(arguments)
        return try ServerAPIRequest.build(call, arguments: normalized, baseURL: baseURL, token: try tokens.token(now: nowSeconds))
    }

    /// Reads the answer to a request for `call` made with `arguments` (those the
    /// answer must match: get_transaction_info's transaction is the one asked for).
    public func read(_ call: ServerAPICall, arguments: [String: JSONValue], httpStatus: Int, retryAfter: String?,
                     body: [UInt8], nowSeconds: Int64? = nil) throws(ReceiptError) -> ServerAPIAnswer {
        try ServerAPIAnswer.read(call, arguments: try call.normalize(arguments), httpStatus: httpStatus,
                                 retryAfter: retryAfter, body: body, verifier: verifier,
                                 nowSeconds: nowSeconds ?? ServerAPITokenSource.wallClockSeconds())
    }

    /// An https URL without query, fragment, user name or trailing slash; http
    /// only to a loopback host (a mock on this machine), since a bearer token sent
    /// in clear text by a typo is a token given away.
    static func checkedBaseURL(_ text: String) throws(ReceiptError) -> String {
        var url = text
        while url.hasSuffix("/") { url.removeLast() }
        let schemeEnd = url.hasPrefix("https://") ? 8 : url.hasPrefix("http://") ? 7 : 0
        guard schemeEnd > 0, url.utf8.count > schemeEnd, url.utf8.count <= 1024,
              url.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }) else {
            throw ReceiptError(.invalidArgument, "the base URL must be https://host[:port][/path] without query or "
                               + "fragment; got \(quoted(String(text.prefix(80))))")
        }
        let authority = String(decoding: url.utf8.dropFirst(schemeEnd).prefix { $0 != UInt8(ascii: "/") }, as: UTF8.self)
        guard !authority.utf8.contains(UInt8(ascii: "@")) else {
            throw ReceiptError(.invalidArgument, "the base URL must not carry a user name or password")
        }
        guard schemeEnd == 8 || isLoopback(authority: authority) else {
            throw ReceiptError(.invalidArgument, "the base URL must be https (http only to a loopback host: "
                               + "127.0.0.0/8, localhost, [::1]); got \(quoted(String(text.prefix(80))))")
        }
        return url
    }

    /// `host[:port]` names this machine: 127.0.0.0/8, localhost, or [::1].
    static func isLoopback(authority: String) -> Bool {
        let host: Substring
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return false }
            host = authority[authority.startIndex...close]
        } else {
            host = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        }
        if host.lowercased() == "localhost" || host == "[::1]" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets.first == "127"
            && octets.allSatisfy { octet in octet.count <= 3 && UInt8(octet) != nil }
    }
}
