extension VerificationStep {
    public static let environment = VerificationStep(rawValue: "environment")
}

/// The document comes from the environment the caller requires, if any. Fails
/// closed: a receipt without a receipt_type (0), or a JWS without an environment,
/// matches no required environment.
struct EnvironmentPolicy: CommonPolicy {
    var step: VerificationStep { .environment }

    func judge(_ context: some PolicyContext) -> StepOutcome {
        guard let required = context.settings.environment else { return .skipped("no environment was required") }
        let claims = context.claims
        let (environment, text) = claims.environment
        return checked { () throws(ReceiptError) in
            guard environment == required else {
                throw ReceiptError(.environmentMismatch, "\(claims.environmentField) is \(quoted(text)); "
                                   + "\(required.rawValue) requires \(claims.environmentValues(required).joined(separator: " or "))")
            }
            return context.detail(quoted(text))
        }
    }
}

/// Which App Store environment a verifier accepts receipts from, read from the
/// receipt's receipt_type (0). Apple's guide: the environment of the receipt decides
/// which rules apply, so a production server must not grant on a sandbox receipt.
public enum ReceiptEnvironment: String, Sendable, CaseIterable {
    /// Receipts `Production` and `ProductionVPP`; JWS `Production`.
    case production
    /// Receipts `ProductionSandbox` and `ProductionVPPSandbox` (TestFlight and the sandbox); JWS `Sandbox`.
    case sandbox
    /// Xcode's StoreKit testing: receipts `Xcode`; JWS `Xcode`.
    case xcode
    /// JWS `LocalTesting` (StoreKit testing in unit tests); no receipt has it.
    case localTesting = "local-testing"

    /// The receipt types of this environment, exactly as receipts write them.
    public var receiptTypes: [String] {
        switch self {
        case .production: ["Production", "ProductionVPP"]
        case .sandbox: ["ProductionSandbox", "ProductionVPPSandbox"]
        case .xcode: ["Xcode"]
        case .localTesting: []
        }
    }

    /// The value of a JWS payload's `environment` (an AppTransaction's `receiptType`)
    /// in this environment, exactly as Apple writes it.
    public var signedName: String {
        switch self {
        case .production: "Production"
        case .sandbox: "Sandbox"
        case .xcode: "Xcode"
        case .localTesting: "LocalTesting"
        }
    }

    /// The environment a JWS names; nil for absent or unknown values.
    public init?(signedName: String?) {
        guard let found = Self.allCases.first(where: { $0.signedName == signedName }) else { return nil }
        self = found
    }

    /// The environment a receipt_type belongs to; nil for Xcode, absent or unknown.
    public init?(receiptType: String?) {
        guard let found = Self.allCases.first(where: { $0.receiptTypes.contains(receiptType ?? "") }) else { return nil }
        self = found
    }
}
