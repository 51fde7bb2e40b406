#if canImport(Glibc)
import Glibc
#endif

/// Decides whether to believe a parsed receipt (SPEC §3). Built once, then
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

    public init(trust: TrustOptions = .appleRoot, anchors: [TrustAnchor] = [],
                policy: VerificationPolicy = VerificationPolicy()) {
        self.trust = trust
        self.policy = policy
        customAnchors = anchors.map(\.certificate)
        cache = ChainCache(known: customAnchors)
    }

    /// The verdict on a receipt's bytes (DER, BER or base64), reading only what
    /// the checks read: every check `verify(_:)` makes, without typing the
    /// purchases. Throws when the bytes are not an app receipt; purchase
    /// attributes go unread, so their errors surface only in `Receipt.parse`.
    public func verify(encoded bytes: UnsafeBufferPointer<UInt8>,
                       limits: ParseLimits = .default) throws(ReceiptError) -> VerificationResult {
        verify(try ReceiptParser.parse(bytes, limits: limits, scope: .verdictFields))
    }

    /// The same, for bytes in an array.
    public func verify(encoded bytes: [UInt8], limits: ParseLimits = .default) throws(ReceiptError) -> VerificationResult {
        try bytes.withUnsafeBufferPointer { (buffer) throws(ReceiptError) in try verify(encoded: buffer, limits: limits) }
    }

    public func verify(_ receipt: Receipt) -> VerificationResult {
        var steps: [(VerificationStep, StepOutcome)] = []
        let signed = SignedReceipt.read(receipt, cache: cache)

        steps.append((.signature, outcome { () throws(ReceiptError) in
            let (signerInfo, signer, fingerprint) = try signed.signerCertificate()
            try CanonicalForm.check(receipt.storage.encoded, container: receipt.container, signer: signerInfo,
                                    signerFingerprint: fingerprint)
            try SignatureCheck.verify(UnsafeBufferPointer(rebasing: receipt.storage.encoded[signerInfo.signature]),
                                      over: receipt.storage.payload, digest: signerInfo.digest, certificate: signer)
            return "RSA with \(signerInfo.digest.name) by \(signer.subject)"
        }))

        let chain = Result { () throws(ReceiptError) in try establishChain(signed, receipt) }
        steps.append((.chain, chain.map { "to the \($0.anchorName) at \(receipt.receiptCreationDate?.text ?? "?")" }
            .outcome))
        switch chain {
        case .success(let established):
            steps += [(.intermediateMarker, established.intermediateMarker), (.leafMarker, established.leafMarker)]
        case .failure:
            steps += [(.intermediateMarker, .skipped("no chain was established")),
                      (.leafMarker, .skipped("no chain was established"))]
        }
        steps += PolicyChecks(policy: policy, receipt: receipt).steps(now: policy.nowMilliseconds ?? Self.currentMilliseconds())
        return VerificationResult(steps: steps.map { StepResult(step: $0.0, outcome: $0.1) }, anchor: try? chain.get().anchorName)
    }

    /// The validated chain from the cache when it holds at this creation date,
    /// otherwise a full validation, remembered for next time.
    private func establishChain(_ signed: SignedReceipt, _ receipt: Receipt) throws(ReceiptError) -> ValidatedChain {
        let (_, signerIndex) = try signed.signer.get()
        let bag = try signed.bag.get()
        guard let created = receipt.receiptCreationDate else {
            throw ReceiptError(.noCreationDate, "no receipt_creation_date (12): the chain cannot be evaluated at it")
        }
        let seconds = floorDivide(created.millisecondsSince1970, 1000)
        if let cached = cache.chain(bag, signer: signerIndex), cached.holds(atEpochSeconds: seconds) {
            return cached
        }
        let validated = try validateChain(bag, signerIndex: signerIndex, atEpochSeconds: seconds)
        cache.remember(validated, bag, signer: signerIndex)
        return validated
    }

    private func validateChain(_ bag: CertificateBag, signerIndex: Int,
                               atEpochSeconds seconds: Int64) throws(ReceiptError) -> ValidatedChain {
        let pinned = PinnedAnchor.allCases.filter { trust.contains($0.option) }
        let pinnedInBag = bag.certificates.indices.filter(bag.isSelfIssued).compactMap { index in
            let fingerprint = bag.fingerprints[index]
            return pinned.first { $0.sha256 == fingerprint }.map { (bag.certificates[index], $0) }
        }
        let anchors = pinnedInBag.map(\.0) + customAnchors
        guard !anchors.isEmpty else {
            if !trust.contains(.xcodeStoreKit), bag.fingerprints.contains(PinnedAnchor.xcodeStoreKit.sha256) {
                throw ReceiptError(.chainUntrusted, "signed by Xcode's StoreKit Testing certificate, which is trusted "
                                   + "only on request (CLI --allow-xcode, C RECEIPT_TRUST_XCODE_STOREKIT, Python allow_xcode=True)")
            }
            throw ReceiptError(.chainUntrusted, "no trusted anchor: the receipt carries no certificate matching an "
                               + "enabled pin (\(pinned.map(\.name).joined(separator: ", "))) and no anchor was added")
        }
        let chain = try ChainValidation.validate(leaf: bag.certificates[signerIndex], untrusted: bag.certificates,
                                                 anchors: anchors, atEpochSeconds: seconds)
        if let extra = bag.certificates.first(where: { certificate in !chain.contains { $0.der == certificate.der } }) {
            throw ReceiptError(.unexpectedCertificates, "\(extra.subject) is in the receipt but not in the verified chain")
        }
        let root = chain[chain.count - 1]
        let pin = pinnedInBag.first { $0.0 === root }?.1
        let window = ChainValidation.validityWindow(chain)
        let (intermediate, leaf) = markerOutcomes(chain, pin: pin)
        return ValidatedChain(certificates: chain, pin: pin, anchorName: pin?.name ?? "added anchor \(root.subject)",
                              notBefore: window.notBefore, notAfter: window.notAfter,
                              intermediateMarker: intermediate, leafMarker: leaf)
    }

    private func markerOutcomes(_ chain: [X509Certificate], pin: PinnedAnchor?) -> (StepOutcome, StepOutcome) {
        if let pin, !pin.requiresAppleMarkers {
            let reason = "the \(pin.name) signs receipts itself and carries no Apple markers"
            return (.skipped(reason), .skipped(reason))
        }
        let intermediate = outcome { () throws(ReceiptError) in
            guard chain.count >= 3 else {
                throw ReceiptError(.missingIntermediateMarker, "the chain has no intermediate (\(chain.count) certificates)")
            }
            return try requireMarker(ObjectIdentifiers.appleIntermediateMarker, on: chain[1], .missingIntermediateMarker)
        }
        let leaf = outcome { () throws(ReceiptError) in
            try requireMarker(ObjectIdentifiers.appleReceiptSigningMarker, on: chain[0], .missingLeafMarker)
        }
        return (intermediate, leaf)
    }

    private func requireMarker(_ oid: [UInt8], on certificate: X509Certificate,
                               _ status: ReceiptStatus) throws(ReceiptError) -> String {
        guard try CertificateInfo(certificate.der).carries(oid) else {
            throw ReceiptError(status, "\(certificate.subject) does not carry \(SignerInfo.dotted(oid))")
        }
        return "\(SignerInfo.dotted(oid)) on \(certificate.subject)"
    }

    static func currentMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}

/// Runs a check and turns its success text or its error into an outcome.
func outcome(_ check: () throws(ReceiptError) -> String) -> StepOutcome {
    do { return .passed(try check()) } catch { return .failed(error) }
}

extension Result where Success == String, Failure == ReceiptError {
    var outcome: StepOutcome {
        switch self {
        case .success(let detail): .passed(detail)
        case .failure(let error): .failed(error)
        }
    }
}
