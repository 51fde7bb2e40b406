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
