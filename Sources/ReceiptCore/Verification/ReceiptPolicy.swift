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

/// A check of a StoreKit 2 JWS (`ReceiptVerifier.jwsPolicies`).
protocol JWSPolicy: Sendable {
    var step: VerificationStep { get }
    func outcome(in context: JWSContext) -> StepOutcome
}

/// What every format's verification offers a policy: the document's claims, the
/// caller's settings, the chain as established, and the instants involved.
protocol PolicyContext {
    var claims: any SignedClaims { get }
    var settings: VerificationPolicy { get }
    var chain: Result<ValidatedChain, ReceiptError> { get }
    /// The instant the chain was evaluated at, as the report names it.
    var chainInstant: String { get }
    var nowMilliseconds: Int64 { get }
    /// False when the caller keeps only the verdict (C `receipt_verify_bytes` without a
    /// result): then steps that pass or are skipped carry no detail. A failure's error
    /// always carries its own.
    var reportsDetails: Bool { get }
}

extension PolicyContext {
    /// `text` when the caller reads details, otherwise "" without building it: formatting
    /// dates and joining names costs about as much as the rest of a warm verdict.
    func detail(_ text: @autoclosure () -> String) -> String { reportsDetails ? text() : "" }
}

/// A policy both formats run as it is (bundle id, version, environment, chain
/// and markers): it reads only what `PolicyContext` offers.
protocol CommonPolicy: ReceiptPolicy, JWSPolicy {
    func judge(_ context: some PolicyContext) -> StepOutcome
}

extension CommonPolicy {
    func outcome(in context: VerificationContext) -> StepOutcome { judge(context) }
    func outcome(in context: JWSContext) -> StepOutcome { judge(context) }
}

/// What the format-independent policies (bundle id, version, expiry, environment)
/// read of a signed document: a receipt today; a StoreKit 2 payload can provide
/// the same claims and reuse those policies as they are.
protocol SignedClaims {
    var bundleID: String? { get }
    /// False where the document's kind never names its app (a renewal info): the
    /// bundle id step is then skipped, not failed.
    var carriesBundleID: Bool { get }
    var applicationVersion: String? { get }
    /// False where the document's kind carries no version (JWS other than AppTransaction).
    var carriesApplicationVersion: Bool { get }
    /// The instant after which the document no longer holds (a VPP receipt's
    /// expiration_date); nil when it does not expire.
    var expirationDate: ReceiptDate? { get }
    /// The environment the document comes from, nil when it names none of them,
    /// and the document's own words for it, for details.
    var environment: (ReceiptEnvironment?, text: String?) { get }
    /// The member that names the environment, for details (`receipt_type`, `environment`).
    var environmentField: String { get }
    /// The values of that member which mean `environment`.
    func environmentValues(_ environment: ReceiptEnvironment) -> [String]
}

extension Receipt: SignedClaims {
    var carriesBundleID: Bool { true }
    var carriesApplicationVersion: Bool { true }
    var environment: (ReceiptEnvironment?, text: String?) { (ReceiptEnvironment(receiptType: receiptType), receiptType) }
    var environmentField: String { "receipt_type" }
    func environmentValues(_ environment: ReceiptEnvironment) -> [String] { environment.receiptTypes }
}

/// What the policies of one verification read: the receipt and its claims, what
/// its signature and chain established (worked out once, before the policies run,
/// since several read them), the caller's settings and the instant to judge at.
struct VerificationContext: PolicyContext {
    let receipt: Receipt
    /// SHA-256 of the payload when the signer's digest is SHA-256: the digest its
    /// signature checks, and the result's fingerprint; nil otherwise.
    let sha256: [UInt8]?
    var claims: any SignedClaims { receipt }
    let settings: VerificationPolicy
    let signed: SignedReceipt
    let chain: Result<ValidatedChain, ReceiptError>
    let reportsDetails: Bool
    /// Read only by the expiration step, for the few receipts that expire: the clock is read then.
    var nowMilliseconds: Int64 { settings.nowMilliseconds ?? ReceiptClock.systemNow() }
    var chainInstant: String { receipt.dateMilliseconds(.receiptCreationDate).map(RFC3339Format.utc) ?? "?" }
}

/// Runs a check and turns its success text or its error into an outcome.
func checked(_ check: () throws(ReceiptError) -> String) -> StepOutcome {
    do { return .passed(try check()) } catch { return .failed(error) }
}
