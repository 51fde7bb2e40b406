/// The chain step's work, shared by the chain and marker policies: the signer's
/// chain to an enabled anchor at the receipt creation date, from the verifier's
/// cache when it holds there, otherwise validated in full and remembered.
extension ReceiptVerifier {
    /// The validated chain from the cache when it holds at this creation date,
    /// otherwise a full validation, remembered for next time.
    func establishChain(_ signed: SignedReceipt, _ receipt: Receipt) throws(ReceiptError) -> ValidatedChain {
        let (_, signerIndex) = try signed.signer.get()
        let bag = try signed.bag.get()
        guard let created = receipt.dateMilliseconds(.receiptCreationDate) else {
            throw ReceiptError(.noCreationDate, "no receipt_creation_date (12): the chain cannot be evaluated at it")
        }
        let seconds = floorDivide(created, 1000)
        if let cached = cache.chain(bag, signer: signerIndex), cached.holds(atEpochSeconds: seconds) {
            return cached
        }
        let validated = try validateChain(bag, signerIndex: signerIndex, atEpochSeconds: seconds)
        cache.remember(validated, bag, signer: signerIndex)
        return validated
    }

    private func validateChain(_ bag: CertificateBag, signerIndex: Int,
                               atEpochSeconds seconds: Int64) throws(ReceiptError) -> ValidatedChain {
        let pinned = PinnedAnchor.enabled(by: trust, for: .receipt)
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
        return ValidatedChain(anchorName: pin?.name ?? "added anchor \(root.subject)",
                              notBefore: window.notBefore, notAfter: window.notAfter,
                              intermediateMarker: intermediate, leafMarker: leaf)
    }

    func markerOutcomes(_ chain: [X509Certificate], pin: PinnedAnchor?) -> (StepOutcome, StepOutcome) {
        if let pin, !pin.requiresAppleMarkers {
            let reason = "the \(pin.name) signs receipts itself and carries no Apple markers"
            return (.skipped(reason), .skipped(reason))
        }
        let intermediate = checked { () throws(ReceiptError) in
            guard chain.count >= 3 else {
                throw ReceiptError(.missingIntermediateMarker, "the chain has no intermediate (\(chain.count) certificates)")
            }
            return try requireMarker(ObjectIdentifiers.appleIntermediateMarker, on: chain[1], .missingIntermediateMarker)
        }
        let leaf = checked { () throws(ReceiptError) in
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
}
