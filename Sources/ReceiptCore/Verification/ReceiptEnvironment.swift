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
