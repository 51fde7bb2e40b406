/// The chain of a JWS's `x5c`, established at the instant the payload was signed.
///
/// The last certificate of `x5c` must be the anchor itself, byte for byte: Apple
/// Root CA - G3 by its pin (with `TrustOptions.appleRoot`), or a certificate the
/// caller added (a test CA's root, or the certificate Xcode exports for its
/// StoreKit testing key, which signs alone). A chain ending anywhere else is
/// untrusted, whatever OpenSSL could build. The system store is never read.
extension ReceiptVerifier {
    /// The slot of a bag's validated chains that JWS use: the markers a JWS
    /// chain requires differ from a receipt's, so the two never share an entry.
    static let jwsChainSlot = -1

    /// `x5c` decoded: base64 DER, at most `ParseLimits.maxCertificates`, from the
    /// verifier's cache when this exact x5c validated before. The cache key is the
    /// x5c text itself (its strings, each followed by ','), so a warm verification
    /// decodes no base64 and no certificate.
    func certificateBag(of payload: SignedPayload) throws(ReceiptError) -> CertificateBag {
        let encoded = payload.certificateChain
        guard !encoded.isEmpty else { throw ReceiptError(.noCertificates, "the JWS header has no x5c") }
        guard encoded.count <= ParseLimits.maxCertificates else {
            throw ReceiptError(.tooManyCertificates, "x5c holds \(encoded.count) certificates; at most \(ParseLimits.maxCertificates) are read")
        }
        var key: [UInt8] = []
        key.reserveCapacity(encoded.reduce(0) { $0 + $1.utf8.count + 1 })
        for text in encoded {
            key.append(contentsOf: text.utf8)
            key.append(UInt8(ascii: ","))
        }
        if let known = key.withUnsafeBufferPointer({ cache.bag(matching: $0) ?? SharedJWSChains.bag(matching: $0) }) {
            return known
        }
        var ders: [[UInt8]] = []
        for (index, text) in encoded.enumerated() {
            do throws(ReceiptError) {
                ders.append(try Self.strictBase64(text))
            } catch {
                throw ReceiptError(.badCertificate, "x5c[\(index)] is not base64 DER: \(error.detail)")
            }
        }
        do throws(ReceiptError) {
            return try CertificateBag.decode(chain: ders, key: key, known: cache.known)
        } catch {
            throw error.asVerdict(.badCertificate, "a certificate in x5c")
        }
    }

    /// Standard base64 (RFC 7515 §4.1.6: x5c is not base64url) with no whitespace.
    private static func strictBase64(_ text: String) throws(ReceiptError) -> [UInt8] {
        try Array(text.utf8).withUnsafeBufferPointer { (input) throws(ReceiptError) -> [UInt8] in
            guard !input.contains(where: Base64.isWhitespace) else {
                throw ReceiptError(.badBase64, "whitespace inside the base64")
            }
            var output = [UInt8](repeating: 0, count: Base64.maxDecodedCount(input))
            let count = try output.withUnsafeMutableBufferPointer { (buffer) throws(ReceiptError) in
                try Base64.decode(input, into: buffer)
            }
            return Array(output[0..<count])
        }
    }

    /// The instant a JWS's chain is judged at: its signing date, else the time the
    /// caller gave; with neither, nothing can be judged (fail closed).
    func chainInstant(of payload: SignedPayload) throws(ReceiptError) -> Int64 {
        if let signed = payload.signingDate { return signed }
        if let given = policy.nowMilliseconds { return given }
        throw ReceiptError(.noCreationDate, "the payload has no \(payload.kind.paths.signingDate) and no time was given "
                           + "(C receipt_verifier_builder_set_now, CLI --now, Python now=)")
    }

    func establishJWSChain(_ bag: CertificateBag, atMilliseconds instant: Int64) throws(ReceiptError) -> ValidatedChain {
        let seconds = floorDivide(instant, 1000)
        if let cached = cache.chain(bag, signer: Self.jwsChainSlot), cached.holds(atEpochSeconds: seconds) {
            return cached
        }
        let last = bag.certificates.count - 1
        let pin = PinnedAnchor.enabled(by: trust, for: .jws).first { $0.sha256 == bag.fingerprints[last] }
        let anchor: X509Certificate
        var untrusted = bag.certificates
        var reissued = false
        if pin != nil, bag.isSelfIssued(last) {
            anchor = bag.certificates[last]
        } else if let added = customAnchors.first(where: { $0.der == bag.certificates[last].der }) {
            anchor = added
        } else if bag.certificates.count > 1, let added = customAnchors.first(where: { bag.certificates[last].isReissue(of: $0) }) {
            // x5c ends in a re-issue of an added anchor (same subject and key, other bytes), as
            // Apple's test chains do: the chain is the intermediate signed by the anchor's key,
            // built to the anchor itself, never to the copy the token brought.
            anchor = added
            untrusted.removeLast()
            reissued = true
        } else {
            let hint = bag.certificates.count == 1
                ? "; an Xcode-signed JWS verifies only against the certificate Xcode exports, passed as an anchor"
                : ""
            throw ReceiptError(.chainUntrusted, "x5c ends in \(bag.certificates[last].subject), which is neither "
                               + "Apple Root CA - G3 (pinned\(trust.contains(.appleRoot) ? "" : ", not enabled")) "
                               + "nor an added anchor\(hint)")
        }
        let anchorName = pin?.name ?? "added anchor \(anchor.subject)" + (reissued ? " (x5c ends in a re-issue of it: same subject and key)" : "")
        let anchorKey = SharedJWSChains.anchorKey(name: anchorName, der: anchor.der)
        if let shared = SharedJWSChains.chain(bag, anchor: anchorKey, atEpochSeconds: seconds) {
            cache.remember(shared, bag, signer: Self.jwsChainSlot)
            return shared
        }
        let chain = try ChainValidation.validate(leaf: bag.certificates[0], untrusted: untrusted,
                                                 anchors: [anchor], atEpochSeconds: seconds)
        guard chain.count == bag.certificates.count else {
            throw ReceiptError(.unexpectedCertificates, "the verified chain has \(chain.count) certificates; x5c has \(bag.certificates.count)")
        }
        let window = ChainValidation.validityWindow(chain)
        let markers: (StepOutcome, StepOutcome)
        if chain.count == 1 {
            let reason = "one self-signed certificate, trusted as an added anchor (Xcode's StoreKit testing shape), carries no Apple markers"
            markers = (.skipped(reason), .skipped(reason))
        } else {
            markers = markerOutcomes(chain, pin: nil)
        }
        let validated = ValidatedChain(anchorName: anchorName,
                                       notBefore: window.notBefore, notAfter: window.notAfter,
                                       intermediateMarker: markers.0, leafMarker: markers.1)
        cache.remember(validated, bag, signer: Self.jwsChainSlot)
        SharedJWSChains.remember(validated, bag, anchor: anchorKey)
        return validated
    }
}
