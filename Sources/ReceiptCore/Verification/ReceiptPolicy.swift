/// One check of a verification, in the manner of swift-certificates'
/// `VerifierPolicy`: a small value that judges one thing and reports it as a
/// `StepOutcome`. A verifier runs its ordered list of policies
/// (`ReceiptVerifier.policies`) in one loop, and every policy reports, whether or
/// not an earlier one failed.
///
/// Adding a step is one type conforming here (with its `VerificationStep` name)
/// and one line in that list; `EnvironmentPolicy` is the example.
protocol ReceiptPolicy: Sendable {
    /// The step's name in reports.
    var step: VerificationStep { get }
    func outcome(in context: VerificationContext) -> StepOutcome
}

/// What the format-independent policies (bundle id, version, expiry, environment)
/// read of a signed document: a receipt today; a StoreKit 2 payload can provide
/// the same claims and reuse those policies as they are.
protocol SignedClaims {
    var bundleID: String? { get }
    var applicationVersion: String? { get }
    /// The instant after which the document no longer holds (a VPP receipt's
    /// expiration_date); nil when it does not expire.
    var expirationDate: ReceiptDate? { get }
    /// The environment the document comes from, nil when it names none of them,
    /// and the document's own words for it, for details.
    var environment: (ReceiptEnvironment?, text: String?) { get }
}

extension Receipt: SignedClaims {
    var environment: (ReceiptEnvironment?, text: String?) { (ReceiptEnvironment(receiptType: receiptType), receiptType) }
}

/// What the policies of one verification read: the receipt and its claims, what
/// its signature and chain established (worked out once, before the policies run,
/// since several read them), the caller's settings and the instant to judge at.
struct VerificationContext {
    let receipt: Receipt
    var claims: any SignedClaims { receipt }
    let settings: VerificationPolicy
    let signed: SignedReceipt
    let chain: Result<ValidatedChain, ReceiptError>
    let nowMilliseconds: Int64
}

/// Runs a check and turns its success text or its error into an outcome.
func checked(_ check: () throws(ReceiptError) -> String) -> StepOutcome {
    do { return .passed(try check()) } catch { return .failed(error) }
}
