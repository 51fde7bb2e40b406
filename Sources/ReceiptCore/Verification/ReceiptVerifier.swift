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

    public init(trust: TrustOptions = .appleRoot, anchors: [TrustAnchor] = [],
                policy: VerificationPolicy = VerificationPolicy()) {
        self.trust = trust
        self.policy = policy
        customAnchors = anchors.map(\.certificate)
    }

    public func verify(_ receipt: Receipt) -> VerificationResult {
        var steps: [(VerificationStep, StepOutcome)] = []
        let signed = SignedReceipt.read(receipt)

        steps.append((.signature, outcome { () throws(ReceiptError) in
            let (signerInfo, signer) = try signed.signer.get()
            try receipt.withEncoded { (bytes) throws(ReceiptError) in
                try SignatureCheck.verify(UnsafeBufferPointer(rebasing: bytes[signerInfo.signature]),
                                          over: receipt.storage.payload, digest: signerInfo.digest, certificate: signer)
            }
            return "RSA with \(signerInfo.digest.name) by \(signer.subject)"
        }))

        let chain = establishChain(signed, receipt)
        steps.append((.chain, chain.map { "to the \($0.anchorName) at \(receipt.receiptCreationDate?.text ?? "?")" }
            .outcome))
        steps += markerSteps(chain)
        steps += PolicyChecks(policy: policy, receipt: receipt).steps(now: policy.nowMilliseconds ?? Self.currentMilliseconds())
        return VerificationResult(steps: steps.map { (step: $0.0, outcome: $0.1) }, anchor: try? chain.get().anchorName)
    }

    private func establishChain(_ signed: SignedReceipt, _ receipt: Receipt) -> Result<EstablishedChain, ReceiptError> {
        Result { () throws(ReceiptError) -> EstablishedChain in
            let (_, signer) = try signed.signer.get()
            let bag = try signed.certificates.get()
            guard let created = receipt.receiptCreationDate else {
                throw ReceiptError(.noCreationDate, "no receipt_creation_date (12): the chain cannot be evaluated at it")
            }
            let pinned = PinnedAnchor.allCases.filter { trust.contains($0.option) }
            let pinnedInBag = bag.compactMap { certificate in
                pinned.first { $0.sha256 == certificate.sha256Fingerprint }.map { (certificate, $0) }
            }
            let anchors = pinnedInBag.map(\.0) + customAnchors
            guard !anchors.isEmpty else {
                throw ReceiptError(.chainUntrusted, "no trusted anchor: the receipt carries no certificate matching an "
                                   + "enabled pin (\(pinned.map(\.name).joined(separator: ", "))) and no anchor was added")
            }
            let seconds = floorDivide(created.millisecondsSince1970, 1000)
            let chain = try ChainValidation.validate(leaf: signer, untrusted: bag, anchors: anchors, atEpochSeconds: seconds)
            if let extra = bag.first(where: { certificate in !chain.contains { $0.der == certificate.der } }) {
                throw ReceiptError(.unexpectedCertificates, "\(extra.subject) is in the receipt but not in the verified chain")
            }
            let root = chain[chain.count - 1]
            let pin = pinnedInBag.first { $0.0 === root }?.1
            return EstablishedChain(certificates: chain, pin: pin, anchorName: pin?.name ?? "added anchor \(root.subject)")
        }
    }

    private func markerSteps(_ chain: Result<EstablishedChain, ReceiptError>) -> [(VerificationStep, StepOutcome)] {
        guard case .success(let established) = chain else {
            return [(.intermediateMarker, .skipped("no chain was established")),
                    (.leafMarker, .skipped("no chain was established"))]
        }
        if let pin = established.pin, !pin.requiresAppleMarkers {
            let reason = "the \(pin.name) signs receipts itself and carries no Apple markers"
            return [(.intermediateMarker, .skipped(reason)), (.leafMarker, .skipped(reason))]
        }
        let chain = established.certificates
        let intermediate = outcome { () throws(ReceiptError) in
            guard chain.count >= 3 else {
                throw ReceiptError(.missingIntermediateMarker, "the chain has no intermediate (\(chain.count) certificates)")
            }
            return try requireMarker(ObjectIdentifiers.appleIntermediateMarker, on: chain[1], .missingIntermediateMarker)
        }
        let leaf = outcome { () throws(ReceiptError) in
            try requireMarker(ObjectIdentifiers.appleReceiptSigningMarker, on: chain[0], .missingLeafMarker)
        }
        return [(.intermediateMarker, intermediate), (.leafMarker, leaf)]
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

struct EstablishedChain {
    let certificates: [X509Certificate]
    let pin: PinnedAnchor?
    let anchorName: String
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

func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
    let quotient = value / divisor
    return (value % divisor != 0 && value < 0) ? quotient - 1 : quotient
}
