/// Decides whether to believe a parsed receipt (docs/FORMAT.md §3). Built once, then
/// immutable and safe to share across threads.
///
/// Trust comes only from the pinned anchors enabled in `trust` and from the
/// certificates given as `anchors`. Custom anchors get the same checks as the
/// Apple root, Apple's marker OIDs included: they exist to test servers with
/// Apple-shaped receipts. Only the Xcode StoreKit anchor, which signs receipts
/// itself, is exempt from the markers.
public final class ReceiptVerifier: Sendable {
    public let trust: TrustOptions
    public let policy: VerificationPolicy
    let customAnchors: [X509Certificate]
    /// Bags and chains this verifier has validated; see ChainCache and ValidatedChain.
    let cache: ChainCache
    /// OCSP answers checked for JWS chains (the revocation step); shared like `cache`.
    let revocations: RevocationCache

    public init(trust: TrustOptions = .appleRoot, anchors: [TrustAnchor] = [],
                policy: VerificationPolicy = VerificationPolicy()) {
        self.trust = trust
        self.policy = policy
        customAnchors = anchors.map(\.certificate)
        cache = ChainCache(known: customAnchors)
        revocations = RevocationCache()
    }

    private init(sharing other: ReceiptVerifier, policy: VerificationPolicy) {
        trust = other.trust
        self.policy = policy
        customAnchors = other.customAnchors
        cache = other.cache
        revocations = other.revocations
    }

    /// The same trust under another policy, sharing this verifier's cache: for a
    /// server that takes the bundle id or environment per request, so that every
    /// request still reuses the chains validated before. Cheap (one allocation).
    public func with(policy: VerificationPolicy) -> ReceiptVerifier {
        ReceiptVerifier(sharing: self, policy: policy)
    }

    /// How often a verification found its chain already validated in the cache
    /// (shared with every verifier made by `with(policy:)`), and how often not.
    public var cacheStatistics: (hits: Int, misses: Int) {
        (cache.hits.load(ordering: .relaxed), cache.misses.load(ordering: .relaxed))
    }

    /// The verdict on a receipt's bytes (DER, BER or base64), reading only what
    /// the checks read: every check `verify(_:)` makes, without typing the
    /// purchases. Throws when the bytes are not an app receipt; purchase
    /// attributes go unread, so their errors surface only in `Receipt.parse`.
    /// `details: false` (for a caller that keeps only the verdict) leaves the details of
    /// steps that pass or are skipped empty; a failed step's error keeps its detail.
    public func verify(encoded bytes: UnsafeBufferPointer<UInt8>, limits: ParseLimits = .default,
                       details: Bool = true) throws(ReceiptError) -> VerificationResult {
        verify(try ReceiptParser.parse(bytes, limits: limits, scope: .verdictFields), details: details)
    }

    /// The verdict alone on a receipt's bytes: the first failing step's error, nil
    /// when the receipt is valid. For a caller that keeps nothing else (the C ABI
    /// called without a result handle): the checks of `verify(encoded:)`, with no
    /// step details and no fingerprint kept for later, which for a receipt signed
    /// with SHA-1 would mean a copy of its payload (79 KB for the largest sample).
    public func verdict(encoded bytes: UnsafeBufferPointer<UInt8>,
                        limits: ParseLimits = .default) throws(ReceiptError) -> ReceiptError? {
        let receipt = try ReceiptParser.parse(bytes, limits: limits, scope: .verdictFields)
        return VerificationResult.firstFailure(in: evaluate(receipt, details: false).steps)
    }

    /// The same, for bytes in an array.
    public func verify(encoded bytes: [UInt8], limits: ParseLimits = .default) throws(ReceiptError) -> VerificationResult {
        try bytes.withUnsafeBufferPointer { (buffer) throws(ReceiptError) in try verify(encoded: buffer, limits: limits) }
    }

    /// The steps, in order: one policy each (see ReceiptPolicy).
    static let policies: [any ReceiptPolicy] = [
        SignaturePolicy(), ChainPolicy(), IntermediateMarkerPolicy(), LeafMarkerPolicy(),
        BundleIDPolicy(), ApplicationVersionPolicy(), DeviceHashPolicy(), ExpirationPolicy(), EnvironmentPolicy(),
        ReceiptRevocationScope(),
    ]

    public func verify(_ receipt: Receipt, details: Bool = true) -> VerificationResult {
        let (steps, anchor, sha256) = evaluate(receipt, details: details)
        // Without a SHA-256 of the payload, the fingerprint waits until someone asks for it (FingerprintSource).
        return VerificationResult(steps: steps, anchor: anchor,
                                  fingerprint: sha256.map(FingerprintSource.init(known:)) ?? FingerprintSource(later: receipt))
    }

    /// Every step's outcome, the anchor reached, and the payload's SHA-256 when the
    /// signature computed it.
    private func evaluate(_ receipt: Receipt, details: Bool) -> (steps: [StepResult], anchor: String?, sha256: [UInt8]?) {
        let signed = SignedReceipt.read(receipt, cache: cache)
        let chain = Result { () throws(ReceiptError) in try establishChain(signed, receipt) }
        // A SHA-256 signature hashes the payload anyway: that digest is the fingerprint too.
        let sha256 = (try? signed.signer.get())?.info.digest == .sha256 ? receipt.fingerprint : nil
        let context = VerificationContext(receipt: receipt, sha256: sha256, settings: policy, signed: signed, chain: chain,
                                          reportsDetails: details)
        let steps = Self.policies.map { StepResult(step: $0.step, outcome: $0.outcome(in: context)) }
        return (steps, try? chain.get().anchorName, sha256)
    }

    @available(*, deprecated, renamed: "ReceiptClock.systemNow()")
    public static func currentMilliseconds() -> Int64 { ReceiptClock.systemNow() }
}
