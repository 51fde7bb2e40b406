import ReceiptCore

/// Apple's Swift library's `SignedDataVerifier`, by its names: a Swift server moving from
/// app-store-server-library-swift keeps its calls. Each `verifyAndDecode…` takes the
/// payload's kind from the call, as Apple's do, and answers Apple's `VerificationResult`:
/// `.valid` with the verified payload (libreceipt's SignedPayload: `payload.string("bundleId")`,
/// `payload.date("expiresDate")`, …, every member of its documented type), or `.invalid` with
/// Apple's `VerificationError`, the one Apple's verifier reaches first (ReceiptCore's
/// `AppleVerificationStatus.refusal(of:production:)`). The judging is ReceiptCore's verifier: the chain at the time
/// of signing against the roots given (never the system's), every member Apple documents
/// typed, a notification's nested JWS verified too; `enableOnlineChecks` asks OCSP
/// (RevocationTransport) in hard mode. As Apple's, the app's Apple id is required and checked
/// in production only.
public struct SignedDataVerifier: Sendable {
    public enum ConfigurationError: Error, Sendable {
        case INVALID_APP_APPLE_ID
    }

    /// Apple's reasons (AppleVerificationStatus without OK).
    public enum VerificationError: String, Error, Hashable, Sendable {
        case INVALID_JWT_FORMAT, INVALID_CERTIFICATE, VERIFICATION_FAILURE, INVALID_APP_IDENTIFIER,
             INVALID_ENVIRONMENT, INVALID_CHAIN_LENGTH, INVALID_CHAIN, RETRYABLE_VERIFICATION_FAILURE
    }

    public enum VerificationResult<T: Sendable>: Sendable {
        case valid(T)
        case invalid(VerificationError)
    }

    public let verifier: ReceiptVerifier
    private let revocation: RevocationTransport?
    /// Whether the app's Apple id counts among the app's identifiers in a refusal, as in Apple's.
    private let production: Bool

    /// `rootCertificates`: DER (or PEM) certificates, Apple's roots as found on Apple PKI.
    public init(rootCertificates: [[UInt8]], bundleId: String, appAppleId: Int64?, environment: ReceiptEnvironment,
                enableOnlineChecks: Bool, revocationTransport: RevocationTransport = RevocationTransport()) throws {
        guard environment != .production || appAppleId != nil else { throw ConfigurationError.INVALID_APP_APPLE_ID }
        let anchors = try rootCertificates.map { bytes throws(ReceiptError) in try TrustAnchor(bytes) }
        var policy = VerificationPolicy(bundleID: bundleId, environment: environment,
                                        appAppleID: environment == .production ? appAppleId : nil)
        policy.revocation = enableOnlineChecks ? .hard : .off
        verifier = ReceiptVerifier(trust: [], anchors: anchors, policy: policy)
        revocation = enableOnlineChecks ? revocationTransport : nil
        production = environment == .production
    }

    public func verifyAndDecodeNotification(signedPayload: String) async -> VerificationResult<SignedPayload> {
        await verify(signedPayload, as: .notification)
    }

    public func verifyAndDecodeTransaction(signedTransaction: String) async -> VerificationResult<SignedPayload> {
        await verify(signedTransaction, as: .transaction)
    }

    public func verifyAndDecodeRenewalInfo(signedRenewalInfo: String) async -> VerificationResult<SignedPayload> {
        await verify(signedRenewalInfo, as: .renewalInfo)
    }

    public func verifyAndDecodeAppTransaction(signedAppTransaction: String) async -> VerificationResult<SignedPayload> {
        await verify(signedAppTransaction, as: .appTransaction)
    }

    public func verifyAndDecodeRealtimeRequest(signedPayload: String) async -> VerificationResult<SignedPayload> {
        await verify(signedPayload, as: .realtimeRequest)
    }

    private func verify(_ token: String, as kind: SignedPayloadKind) async -> VerificationResult<SignedPayload> {
        let payload: SignedPayload
        do {
            payload = try SignedPayload.decode(token, as: kind)
        } catch {
            return .invalid(.VERIFICATION_FAILURE)  // not a readable JWS of this kind: Apple's word for it
        }
        if let revocation { _ = await revocation.ask(about: payload, for: verifier) }
        let result = verifier.verify(jws: payload)
        guard !result.isValid else { return .valid(payload) }
        let refusal = AppleVerificationStatus.refusal(of: result, production: production).status
        return .invalid(VerificationError(rawValue: refusal.rawValue) ?? .VERIFICATION_FAILURE)
    }
}
