import HTTPTypes
import ReceiptCore

/// The bearer tokens `receipt serve` takes, each for its own kind of request, compared in
/// constant time (SharedSecret):
/// - read: what the store knows of customers (JSON reads, the dashboard, figures, events);
/// - write: anything that sends something somewhere or changes what will be sent
///   (consumption answers, event replay); never a read token, so that the token a support
///   person types into the dashboard cannot send data to Apple or re-send webhooks;
/// - metrics: `/metrics` alone (a scraper's), which a read token also opens.
/// With `openReads` (--allow-unauthenticated-reads) reads need none; writes always do.
public struct ServerCredentials: Sendable {
    let readTokens: [String]
    let writeTokens: [String]
    let metricsTokens: [String]
    /// Reads without a token are allowed too.
    public let openReads: Bool

    /// The shortest token taken: 22 characters, what 16 random bytes are in base64.
    public static let minimumTokenCharacters = 22

    /// Refuses a token shorter than `minimumTokenCharacters`, and a token given for two kinds.
    public init(read: [String] = [], write: [String] = [], metrics: [String] = [], openReads: Bool = false) throws(ReceiptError) {
        for (kind, tokens) in [("read", read), ("write", write), ("metrics", metrics)] {
            if let short = tokens.first(where: { $0.count < Self.minimumTokenCharacters }) {
                throw ReceiptError(.invalidArgument, "a \(kind) token of \(short.count) characters is too easily guessed: give at least "
                                   + "\(Self.minimumTokenCharacters) (e.g. `openssl rand -base64 24`)")
            }
        }
        guard Set(write).isDisjoint(with: read), Set(write).isDisjoint(with: metrics), Set(read).isDisjoint(with: metrics) else {
            throw ReceiptError(.invalidArgument, "a token is given as two kinds (read, write, metrics): each kind needs tokens of its own")
        }
        (readTokens, writeTokens, metricsTokens, self.openReads) = (read, write, metrics, openReads)
    }

    /// No token at all, reads closed: what a server without a store starts with.
    public static let none = try! ServerCredentials()

    /// Whether any token was given (a server without a store and without tokens serves `/metrics` openly:
    /// it counts verifications only, nothing of customers).
    var hasTokens: Bool { !(readTokens.isEmpty && writeTokens.isEmpty && metricsTokens.isEmpty) }

    /// What a request must carry.
    enum Need: Sendable { case read, write, metrics }

    /// How a request stands against a need.
    enum Standing: Sendable, Equatable {
        /// Allowed, with the token's fingerprint (nil: open reads, no token given).
        case granted(fingerprint: String?)
        /// No credential and none optional: 401, not counted as a failed attempt.
        case missing
        /// A credential that is none of the server's: 401, counted (ClientThrottle).
        case wrong
        /// A credential of another kind (a read token on a write): 403.
        case otherKind
    }

    /// The request's `Authorization: Bearer …` against `need`; with `basic`, also
    /// `Authorization: Basic …` whose password is the token (what a browser sends for a page).
    func standing(of headers: HTTPFields, need: Need, basic: Bool = false) -> Standing {
        let accepted = switch need {
        case .read: readTokens
        case .write: writeTokens
        case .metrics: readTokens + metricsTokens
        }
        let optional = need != .write && openReads || need == .metrics && !hasTokens
        guard let value = headers[.authorization] else { return optional ? .granted(fingerprint: nil) : .missing }
        let presented: String
        if basic, let password = HTTPBasicCredentials.password(inAuthorization: value) {
            presented = password
        } else {
            let scheme = "bearer "
            guard value.utf8.count > scheme.utf8.count, value.prefix(scheme.count).lowercased() == scheme else { return .wrong }
            presented = String(value.dropFirst(scheme.count))
        }
        if SharedSecret.matchesAny(presented, of: accepted) { return .granted(fingerprint: SharedSecret.fingerprint(presented)) }
        let others = readTokens + writeTokens + metricsTokens
        return SharedSecret.matchesAny(presented, of: others) ? .otherKind : .wrong
    }
}
