extension VerificationStep {
    public static let environment = VerificationStep(rawValue: "environment")
}

/// The receipt comes from the environment the caller requires, if any. Fails
/// closed: a receipt without a receipt_type (0), or of a type neither environment
/// has (Xcode), matches no required environment.
struct EnvironmentPolicy: ReceiptPolicy {
    var step: VerificationStep { .environment }

    func outcome(in context: VerificationContext) -> StepOutcome {
        guard let required = context.settings.environment else { return .skipped("no environment was required") }
        let (environment, text) = context.claims.environment
        return checked { () throws(ReceiptError) in
            guard environment == required else {
                throw ReceiptError(.environmentMismatch, "receipt_type is \(quoted(text)); "
                                   + "\(required.rawValue) requires \(required.receiptTypes.joined(separator: " or "))")
            }
            return quoted(text)
        }
    }
}

/// Which App Store environment a verifier accepts receipts from, read from the
/// receipt's receipt_type (0). Apple's guide: the environment of the receipt decides
/// which rules apply, so a production server must not grant on a sandbox receipt.
public enum ReceiptEnvironment: String, Sendable, CaseIterable {
    /// `Production` and `ProductionVPP`.
    case production
    /// `ProductionSandbox` and `ProductionVPPSandbox` (TestFlight and the sandbox).
    case sandbox

    /// The receipt types of this environment, exactly as receipts write them.
    public var receiptTypes: [String] {
        switch self {
        case .production: ["Production", "ProductionVPP"]
        case .sandbox: ["ProductionSandbox", "ProductionVPPSandbox"]
        }
    }

    /// The environment a receipt_type belongs to; nil for Xcode, absent or unknown.
    public init?(receiptType: String?) {
        guard let found = Self.allCases.first(where: { $0.receiptTypes.contains(receiptType ?? "") }) else { return nil }
        self = found
    }
}
