import HTTPTypes
import ReceiptCore

/// Who may read what the store knows of customers (GET /v1/subscriptions,
/// /v1/entitlements, /v1/consent): a caller with one of the bearer tokens the server was
/// given, compared in constant time (SharedSecret); or anyone, when the operator
/// said so (--allow-unauthenticated-reads, logged at start). Only a caller with a
/// token may make the server spend the app's App Store Server API quota (catch-up).
public struct ReadAuthorization: Sendable {
    let tokens: [String]
    /// Reads without a token are allowed too.
    public let open: Bool

    /// `tokens`: the accepted bearer tokens; `open`: reads without one are allowed too.
    public init(tokens: [String], open: Bool) {
        self.tokens = tokens
        self.open = open
    }

    public enum Caller: Sendable { case authenticated, anonymous, refused }

    /// What the request's `Authorization: Bearer …` makes its sender; with `basic`, also
    /// `Authorization: Basic …` whose password is a token (what a browser sends for a page,
    /// the dashboard, after asking for it).
    func caller(of headers: HTTPFields, basic: Bool = false) -> Caller {
        guard let value = headers[.authorization] else { return open ? .anonymous : .refused }
        if basic, let password = HTTPBasicCredentials.password(inAuthorization: value) {
            return SharedSecret.matchesAny(password, of: tokens) ? .authenticated : .refused
        }
        let scheme = "bearer "
        guard value.utf8.count > scheme.utf8.count, value.prefix(scheme.count).lowercased() == scheme else { return .refused }
        return SharedSecret.matchesAny(String(value.dropFirst(scheme.count)), of: tokens) ? .authenticated : .refused
    }
}
