/// What the policies of one JWS verification read: the decoded JWS, its
/// certificate chain (from the verifier's cache, or checked and decoded anew),
/// the chain as established at the signing date, and the verifier itself, which
/// verifies a notification's nested JWS.
struct JWSContext: PolicyContext {
    let payload: SignedPayload
    /// SHA-256 of `header.payload`: what ES256 signs, and the result's fingerprint.
    let fingerprint: [UInt8]
    var claims: any SignedClaims { payload }
    let settings: VerificationPolicy
    let bag: Result<CertificateBag, ReceiptError>
    let chain: Result<ValidatedChain, ReceiptError>
    let chainInstant: String
    let nowMilliseconds: Int64
    let reportsDetails = true
    let verifier: ReceiptVerifier
    /// 0 for the JWS the caller passed; 1 for a JWS nested in a notification,
    /// whose own nested members are not followed.
    let depth: Int
}

extension SignedPayload: SignedClaims {
    var carriesBundleID: Bool { !kind.paths.bundleID.isEmpty }
    var applicationVersion: String? { kind == .appTransaction ? string("applicationVersion") : nil }
    var carriesApplicationVersion: Bool { kind == .appTransaction }
    /// JWS payloads name no expiry of the document itself.
    var expirationDate: ReceiptDate? { nil }
    var environment: (ReceiptEnvironment?, text: String?) {
        (ReceiptEnvironment(signedName: environmentName), environmentName)
    }
    var environmentField: String {
        if kind == .notification, firstText(kind.paths.environment) == nil, firstText([Self.externalPurchaseID]) != nil {
            return "\(Self.externalPurchaseID)'s prefix"
        }
        return kind.paths.environment.first?.description ?? "environment"
    }
    func environmentValues(_ environment: ReceiptEnvironment) -> [String] { [environment.signedName] }
}
