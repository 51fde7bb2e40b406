/// StoreKit 2 JWS verification: the same verifier, trust, cache and step report
/// as receipts, with the JWS's own header and signature steps.
extension ReceiptVerifier {
    /// The steps, in order. Chain, markers, bundle id, version and environment are
    /// the receipts' own policies (CommonPolicy).
    static let jwsPolicies: [any JWSPolicy] = [
        JWSHeaderPolicy(), JWSSignaturePolicy(), ChainPolicy(), IntermediateMarkerPolicy(), LeafMarkerPolicy(),
        BundleIDPolicy(), ApplicationVersionPolicy(), EnvironmentPolicy(), AppAppleIDPolicy(), NestedJWSPolicy(),
        RevocationPolicy(),
    ]

    /// The verdict on a decoded JWS.
    public func verify(jws payload: SignedPayload) -> VerificationResult {
        verify(jws: payload, depth: 0)
    }

    /// Decodes a compact JWS and judges it. Throws when the bytes are not a
    /// readable JWS (`SignedPayload.decode`); a readable one always gets a verdict.
    /// `kind`: the kind the caller expects (`SignedPayload.decode(_:as:)`), or nil.
    public func verify(jws bytes: UnsafeBufferPointer<UInt8>, limits: ParseLimits = .default,
                       as kind: SignedPayloadKind? = nil) throws(ReceiptError) -> (payload: SignedPayload, result: VerificationResult) {
        let payload = try SignedPayload.decode(bytes, limits: limits, as: kind)
        return (payload, verify(jws: payload))
    }

    public func verify(jws bytes: [UInt8], limits: ParseLimits = .default,
                       as kind: SignedPayloadKind? = nil) throws(ReceiptError) -> (payload: SignedPayload, result: VerificationResult) {
        try bytes.withUnsafeBufferPointer { (buffer) throws(ReceiptError) in try verify(jws: buffer, limits: limits, as: kind) }
    }

    public func verify(jws token: String, as kind: SignedPayloadKind? = nil) throws(ReceiptError) -> (payload: SignedPayload, result: VerificationResult) {
        try verify(jws: Array(token.utf8), as: kind)
    }

    func verify(jws given: SignedPayload, depth: Int) -> VerificationResult {
        // A payload decoded alone (`decodeVerifiedBefore`) is judged as its whole token
        // decodes: every step fails, by the decoding's error, where the token does not.
        let payload: SignedPayload
        do { payload = try given.inFull() } catch {
            return VerificationResult(steps: Self.jwsPolicies.map { StepResult(step: $0.step, outcome: .failed(error)) },
                                      anchor: nil, fingerprint: FingerprintSource(known: given.fingerprint))
        }
        let bag = Result { () throws(ReceiptError) in try certificateBag(of: payload) }
        let instant = Result { () throws(ReceiptError) in try chainInstant(of: payload) }
        let chain = Result { () throws(ReceiptError) in
            try establishJWSChain(try bag.get(), atMilliseconds: try instant.get())
        }
        let instantText = (try? instant.get()).map(RFC3339Format.utc) ?? "?"
        let fingerprint = payload.fingerprint
        let context = JWSContext(payload: payload, fingerprint: fingerprint, settings: policy, bag: bag, chain: chain, chainInstant: instantText,
                                 nowMilliseconds: policy.nowMilliseconds ?? ReceiptClock.systemNow(),
                                 verifier: self, depth: depth)
        let steps = Self.jwsPolicies.map { StepResult(step: $0.step, outcome: $0.outcome(in: context)) }
        return VerificationResult(steps: steps, anchor: try? chain.get().anchorName,
                                  fingerprint: FingerprintSource(known: fingerprint))
    }
}
