/// Apple's names for why signed data was refused (`VerificationStatus` in Apple's
/// Python library, `VerificationError` in its Swift one), for a libreceipt status:
/// the drop-ins answer as Apple's verifier would. What Apple has no name for is
/// `VERIFICATION_FAILURE`, Apple's word for a signature or chain that does not hold.
public enum AppleVerificationStatus: String, Sendable, CaseIterable {
    case OK
    case VERIFICATION_FAILURE
    case INVALID_APP_IDENTIFIER
    case INVALID_CERTIFICATE
    case INVALID_CHAIN_LENGTH
    case INVALID_CHAIN
    case INVALID_ENVIRONMENT
    case RETRYABLE_VERIFICATION_FAILURE
    case INVALID_JWT_FORMAT

    public init(_ status: ReceiptStatus) {
        switch status {
        case .ok: self = .OK
        case .bundleMismatch, .appAppleIDMismatch: self = .INVALID_APP_IDENTIFIER
        case .environmentMismatch: self = .INVALID_ENVIRONMENT
        case .certificateCount: self = .INVALID_CHAIN_LENGTH
        case .badCertificate: self = .INVALID_CERTIFICATE
        case .revocationUnknown: self = .RETRYABLE_VERIFICATION_FAILURE
        default: self = .VERIFICATION_FAILURE
        }
    }
}

extension AppleVerificationStatus {
    /// Apple's status for a verdict, and the index of the step it comes from (nil when the
    /// verdict passed, or failed with no step carrying it). Every libreceipt step reports,
    /// so the status is the one Apple's verifier reaches first: its signature and chain
    /// checks come before the app's identifiers, and those before the environment. The
    /// app's Apple id counts among the identifiers in `production` only, as in Apple's
    /// (libreceipt requires it of any production JWS, so a non-production verifier's
    /// refusal of a production JWS is Apple's INVALID_ENVIRONMENT). Of steps of one
    /// rank, the first.
    public static func refusal(of result: VerificationResult, production: Bool)
        -> (status: AppleVerificationStatus, step: Int?) {
        var found: (rank: Int, step: Int, status: AppleVerificationStatus)?
        for (index, entry) in result.steps.enumerated() {
            guard case .failed(let error) = entry.outcome else { continue }
            let status = AppleVerificationStatus(error.status)
            let rank = switch status {
            case .INVALID_APP_IDENTIFIER: production || error.status != .appAppleIDMismatch ? 1 : 3
            case .INVALID_ENVIRONMENT: 2
            default: 0
            }
            if found.map({ rank < $0.rank }) ?? true { found = (rank, index, status) }
        }
        guard let found else { return (AppleVerificationStatus(result.status), nil) }
        return (found.status, found.step)
    }
}
