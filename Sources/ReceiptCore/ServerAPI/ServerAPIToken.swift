import Synchronization

/// The bearer token of App Store Server API requests: a JWT signed ES256 with the
/// in-app purchase key. Header `alg`, `kid`, `typ: JWT`; claims `iss` (issuer id),
/// `iat`, `exp`, `aud: appstoreconnect-v1`, `bid` (bundle id). Apple refuses tokens
/// that live longer than 60 minutes.
public enum ServerAPIToken {
    public static let audience = "appstoreconnect-v1"
    /// Apple's upper bound on a token's life.
    public static let maxLifetimeSeconds: Int64 = 3600

    /// A token issued at `issuedAt` (epoch seconds) that expires `lifetime` seconds later.
    public static func make(_ credentials: ServerAPICredentials, issuedAt: Int64,
                            lifetime: Int64 = maxLifetimeSeconds) throws(ReceiptError) -> String {
        guard (1...maxLifetimeSeconds).contains(lifetime) else {
            throw ReceiptError(.invalidArgument, "a token lives 1 to \(maxLifetimeSeconds) seconds; not \(lifetime)")
        }
        var claims = JSONWriter()
        claims.beginObject()
        claims.string("iss", try credentials.requiredIssuerID())
        claims.number("iat", issuedAt)
        claims.number("exp", issuedAt + lifetime)
        claims.string("aud", audience)
        claims.string("bid", credentials.bundleID)
        claims.endObject()
        return try credentials.signJWT(claims.bytes)
    }
}

/// Hands out one token until shortly before it expires, then a new one: signing
/// costs an ECDSA operation, and Apple accepts a token for its whole life. Shared by
/// all threads of a client.
public final class ServerAPITokenSource: Sendable {
    public let credentials: ServerAPICredentials
    /// How long each token lives (at most ServerAPIToken.maxLifetimeSeconds).
    public let lifetimeSeconds: Int64
    /// A token is replaced this long before it expires, so that none expires in flight.
    public let renewalMarginSeconds: Int64
    private let current = Mutex<(token: String, expires: Int64)?>(nil)

    public init(_ credentials: ServerAPICredentials, lifetimeSeconds: Int64 = 1800,
                renewalMarginSeconds: Int64 = 120) throws(ReceiptError) {
        guard (1...ServerAPIToken.maxLifetimeSeconds).contains(lifetimeSeconds),
              (0..<lifetimeSeconds).contains(renewalMarginSeconds) else {
            throw ReceiptError(.invalidArgument, "token lifetime 1 to \(ServerAPIToken.maxLifetimeSeconds) s, "
                               + "and a renewal margin shorter than it")
        }
        _ = try credentials.requiredIssuerID()
        self.credentials = credentials
        self.lifetimeSeconds = lifetimeSeconds
        self.renewalMarginSeconds = renewalMarginSeconds
    }

    /// The token to send at `now` (epoch seconds; the wall clock when omitted).
    public func token(now: Int64? = nil) throws(ReceiptError) -> String {
        let instant = now ?? Self.wallClockSeconds()
        return try current.withLock { (held) throws(ReceiptError) -> String in
            if let held, instant >= held.expires - lifetimeSeconds, instant < held.expires - renewalMarginSeconds {
                return held.token
            }
            let token = try ServerAPIToken.make(credentials, issuedAt: instant, lifetime: lifetimeSeconds)
            held = (token, instant + lifetimeSeconds)
            return token
        }
    }

    static func wallClockSeconds() -> Int64 { ReceiptClock.systemNow() / 1000 }
}
