/// One endpoint for receipts and StoreKit 2 JWS alike (`receipt serve`'s
/// `/v1/verify`): the body is a receipt (DER, BER or base64) or a compact JWS; the
/// answer is `receipt verify --json`'s object (`valid`, `status`, `anchor`,
/// `steps`), plus `payload`, exactly as signed, for a JWS.
///
/// Policy is the server's, and a request may name its own `bundle_id`,
/// `environment` and `app_apple_id` as query parameters: those replace the
/// server's for that request, on a verifier that shares the server's trust and
/// cache (ReceiptVerifier.with(policy:)). Any other parameter is refused, so that
/// a misspelt policy is never silently not checked.
///
/// Immutable, and safe to share across threads.
public struct VerdictEndpoint: Sendable {
    public let verifier: ReceiptVerifier

    /// The query parameters a request may set, each at most once.
    public static let parameterNames = ["bundle_id", "environment", "app_apple_id"]

    public init(verifier: ReceiptVerifier) {
        self.verifier = verifier
    }

    public struct Answer: Sendable {
        /// The JSON as UTF-8, as a server sends it.
        public let bytes: [UInt8]
        /// The verdict's status; for an unreadable body or a bad parameter, why.
        public let status: ReceiptStatus
        /// Set when there is no verdict: the body could not be read, or a parameter
        /// could not be used (the HTTP server answers 400 then).
        public let refusal: ReceiptError?
        /// A JWS whose revocation step lacked OCSP answers (RevocationPolicy.wantsAnswers):
        /// a server may ask them (ReceiptVerifier.revocationQueries) and answer again.
        public var revocationPending: SignedPayload? = nil

        public var json: String { String(decoding: bytes, as: UTF8.self) }
    }

    public func answer(toBody body: [UInt8], query: [(name: String, value: String)]) -> Answer {
        do throws(ReceiptError) {
            let judge = try verifier(for: query)
            var writer = JSONWriter()
            writer.beginObject()
            let status: ReceiptStatus
            var pending: SignedPayload?
            if SignedFormat(of: body) == .jws {
                let (payload, result) = try judge.verify(jws: body)
                result.writeMembers(into: &writer)
                writer.string("type", payload.kind.rawValue)
                writer.raw("payload", payload.jws.payloadBytes)
                status = result.status
                if RevocationPolicy.wantsAnswers(result) { pending = payload }
            } else {
                let result = judge.verify(try Receipt.parse(body))
                result.writeMembers(into: &writer)
                status = result.status
            }
            writer.endObject()
            return Answer(bytes: writer.bytes, status: status, refusal: nil, revocationPending: pending)
        } catch {
            return Self.refusal(error)
        }
    }

    /// A refusal in the verdict's shape: not valid, the status, and the detail.
    public static func refusal(_ error: ReceiptError) -> Answer {
        var writer = JSONWriter()
        writer.beginObject()
        writer.bool("valid", false)
        writer.string("status", error.status.name)
        writer.string("detail", error.detail)
        if let offset = error.offset { writer.number("offset", Int64(offset)) }
        writer.beginArray("steps")
        writer.endArray()
        writer.endObject()
        return Answer(bytes: writer.bytes, status: error.status, refusal: error)
    }

    /// The server's verifier, or one with the request's policy over the server's.
    func verifier(for query: [(name: String, value: String)]) throws(ReceiptError) -> ReceiptVerifier {
        guard !query.isEmpty else { return verifier }
        var policy = verifier.policy
        var seen: Set<String> = []
        for (name, value) in query {
            guard Self.parameterNames.contains(name) else {
                throw ReceiptError(.invalidArgument, "unknown query parameter \"\(name)\"; known: \(Self.parameterNames.joined(separator: ", "))")
            }
            guard seen.insert(name).inserted else {
                throw ReceiptError(.invalidArgument, "query parameter \"\(name)\" is given twice")
            }
            switch name {
            case "bundle_id":
                policy.bundleID = value
                policy.otherBundleIDs = []
            case "environment":
                guard let environment = ReceiptEnvironment(rawValue: value) else {
                    let known = ReceiptEnvironment.allCases.map(\.rawValue).joined(separator: ", ")
                    throw ReceiptError(.invalidArgument, "environment \"\(value)\" is not one of \(known)")
                }
                policy.environment = environment
            default:
                guard let id = Int64(value), id > 0 else {
                    throw ReceiptError(.invalidArgument, "app_apple_id \"\(value)\" is not a positive integer")
                }
                policy.appAppleID = id
            }
        }
        return verifier.with(policy: policy)
    }
}
