import HTTPTypes
import ReceiptCore

/// Who may read what the store knows of customers (GET /v1/subscriptions,
/// /v1/entitlements): a caller with one of the bearer tokens the server was
/// given, compared in constant time; or anyone, when the operator said so
/// (--allow-unauthenticated-reads, logged at start). Only a caller with a token
/// may make the server spend the app's App Store Server API quota (catch-up).
public struct ReadAuthorization: Sendable {
    let tokens: [[UInt8]]
    /// Reads without a token are allowed too.
    public let open: Bool

    /// `tokens`: the accepted bearer tokens; `open`: reads without one are allowed too.
    public init(tokens: [String], open: Bool) {
        self.tokens = tokens.map { Array($0.utf8) }
        self.open = open
    }

    public enum Caller: Sendable { case authenticated, anonymous, refused }

    /// What the request's `Authorization: Bearer …` makes its sender.
    func caller(of headers: HTTPFields) -> Caller {
        guard let value = headers[.authorization] else { return open ? .anonymous : .refused }
        let bytes = Array(value.utf8)
        let prefix = Array("Bearer ".utf8)
        guard bytes.count > prefix.count, bytes[..<prefix.count].elementsEqual(prefix, by: { $0 | 0x20 == $1 | 0x20 }) else {
            return .refused
        }
        let candidate = Array(bytes[prefix.count...])
        var matched = false
        for token in tokens { matched = Self.constantTimeEqual(candidate, token) || matched }
        return matched ? .authenticated : .refused
    }

    /// Equal bytes, in a time that depends on the lengths only.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }
}
