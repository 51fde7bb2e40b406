#if canImport(Glibc)
import Glibc
#endif

extension VerificationStep {
    public static let revocation = VerificationStep(rawValue: "revocation")
}

/// One OCSP question a JWS's chain needs answered: POST `request` to `url` as
/// `application/ocsp-request`, then hand the answer to
/// `ReceiptVerifier.acceptRevocationAnswer`. Made only for chains that lead to a
/// trusted anchor, so no URL an attacker wrote is ever asked.
public struct RevocationQuery: Sendable {
    public var url: String { query.url }
    public var request: [UInt8] { query.request }
    /// One name per certificate asked about (its fingerprint in hex), so that asks may be shared.
    public var certificateID: String { hexString(certificateKey) }
    /// The certificate's subject, for logs.
    public let subject: String
    let query: OCSP.Query
    let certificateKey: [UInt8]
    let issuer: X509Certificate
    let chain: [X509Certificate]
    let anchor: X509Certificate
}

/// The `revocation` step: reads what the verifier's cache holds for the leaf and
/// the intermediate of an App Store chain (x5c of 3). Receipts and Xcode's
/// one-certificate chains are out of its scope; OCSP is asked by the caller's
/// transport, never here.
public struct RevocationPolicy: JWSPolicy {
    public var step: VerificationStep { .revocation }

    func outcome(in context: JWSContext) -> StepOutcome {
        let mode = context.settings.revocation
        guard mode != .off else { return .skipped("revocation is not checked (mode off)") }
        guard let bag = try? context.bag.get(), bag.certificates.count == 3 else {
            return .skipped("only App Store chains (x5c of 3) are checked; an Xcode chain has no responder")
        }
        guard (try? context.chain.get()) != nil else { return .skipped("no trusted chain to check") }
        let now = ReceiptClock.systemNow() / 1000
        var missing: [String] = []
        for index in 0..<2 {
            let subject = bag.certificates[index].subject
            guard let entry = context.verifier.revocations.fresh(bag.fingerprints[index], nowSeconds: now) else {
                missing.append("\(subject): no fresh OCSP answer")
                continue
            }
            switch entry.answer.status {
            case .good:
                continue
            case .revoked(let at, let reason):
                return .failed(ReceiptError(.revoked, "\(subject) is revoked"
                                            + (at.map { " since \(RFC3339Format.utc($0 * 1000))" } ?? "")
                                            + (reason >= 0 ? " (CRLReason \(reason))" : "")))
            case .unknown:
                missing.append("\(subject): the responder does not know it")
            }
        }
        if missing.isEmpty { return .passed("leaf and intermediate good (OCSP)") }
        let detail = missing.joined(separator: "; ")
        return mode == .soft ? .passed("\(Self.warningPrefix)\(detail); passed in soft mode")
                             : .failed(ReceiptError(.revocationUnknown, detail))
    }

    static let warningPrefix = "warning: "

    /// Whether a verdict lacks OCSP answers its revocation step wanted (soft's
    /// warning, hard's RECEIPT_E_REVOCATION_UNKNOWN): asking and judging again may change it.
    public static func wantsAnswers(_ result: VerificationResult) -> Bool {
        switch result.outcome(of: .revocation) {
        case .failed(let error): error.status == .revocationUnknown
        case .passed(let detail): detail.hasPrefix(warningPrefix)
        default: false
        }
    }
}

/// The `revocation` step of a receipt's report: always skipped, and it says why,
/// so that a reader of the report never wonders whether receipts were checked.
struct ReceiptRevocationScope: ReceiptPolicy {
    var step: VerificationStep { .revocation }

    func outcome(in context: VerificationContext) -> StepOutcome {
        .skipped("receipts are out of the revocation step's scope: it checks StoreKit 2 (JWS) App Store chains")
    }
}

extension ReceiptVerifier {
    /// The OCSP questions a JWS's chain still needs (none for a chain not trusted,
    /// not of 3 certificates, or whose answers are cached and fresh). Throws when
    /// the token is not a readable JWS.
    public func revocationQueries(for payload: SignedPayload, nonce: Bool = false) throws(ReceiptError) -> [RevocationQuery] {
        let bag = try certificateBag(of: payload)
        guard bag.certificates.count == 3 else { return [] }
        do throws(ReceiptError) {
            // Only a JWS whose signature verifies by a trusted chain is asked about:
            // no attacker-written URL is ever fetched, and a forged JWS that reuses
            // Apple's public x5c makes no request either.
            _ = try establishJWSChain(bag, atMilliseconds: try chainInstant(of: payload))
            try ES256Signature.verify(payload.signature, digest: payload.fingerprint,
                                      certificate: bag.certificates[0], precomputed: bag.precomputedLeafKey())
        } catch {
            return []
        }
        let now = ReceiptClock.systemNow() / 1000
        var queries: [RevocationQuery] = []
        for index in 0..<2 where revocations.fresh(bag.fingerprints[index], nowSeconds: now) == nil {
            let certificate = bag.certificates[index], issuer = bag.certificates[index + 1]
            guard let query = try OCSP.query(for: certificate, issuer: issuer, nonce: nonce) else { continue }
            queries.append(RevocationQuery(subject: certificate.subject, query: query, certificateKey: bag.fingerprints[index],
                                           issuer: issuer, chain: Array(bag.certificates[(index + 1)...]),
                                           anchor: bag.certificates[2]))
        }
        return queries
    }

    /// Checks the HTTP answer to `query` and, when it is a valid OCSP answer,
    /// keeps it for every later verification. Returns what it says; throws
    /// RECEIPT_E_BAD_OCSP_RESPONSE for anything that is not a valid answer (a
    /// non-200 status included), which is never cached and never counts as good.
    @discardableResult
    public func acceptRevocationAnswer(_ query: RevocationQuery, httpStatus: Int, body: [UInt8]) throws(ReceiptError) -> String {
        guard httpStatus == 200 else {
            throw ReceiptError(.badOCSPResponse, "\(query.url) answered HTTP \(httpStatus) for \(query.subject)")
        }
        let now = ReceiptClock.systemNow() / 1000
        let answer = try OCSP.check(body, for: query.query, issuer: query.issuer, chain: query.chain, anchor: query.anchor,
                                    nowSeconds: now)
        revocations.store(answer, for: query.certificateKey, query: query, nowSeconds: now)
        return switch answer.status {
        case .good: "good"
        case .revoked: "revoked"
        case .unknown: "unknown"
        }
    }

    /// The questions to ask again now, so that no verification finds its answers
    /// expired: those of every cached answer that expires within `windowSeconds`.
    public func revocationQueriesDue(withinSeconds windowSeconds: Int64) -> [RevocationQuery] {
        revocations.due(nowSeconds: ReceiptClock.systemNow() / 1000, window: windowSeconds)
    }

    /// How often the revocation step found a fresh answer in the cache, and how often not.
    public var revocationCacheStatistics: (hits: Int, misses: Int) {
        (revocations.hits.load(ordering: .relaxed), revocations.misses.load(ordering: .relaxed))
    }
}
