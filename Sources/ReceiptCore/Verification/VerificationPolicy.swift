/// What a receipt must say besides being signed (SPEC §3 steps 3–6, and the
/// environment). A nil
/// field is not checked, and the result reports that step as skipped.
public struct VerificationPolicy: Sendable, Equatable {
    /// Compared byte for byte as UTF-8, never by Unicode equivalence.
    public var bundleID: String?
    public var applicationVersion: String?
    /// 16 bytes (identifierForVendor) on iOS, 6 (en0 MAC address) on macOS.
    public var deviceIdentifier: [UInt8]?
    /// The instant the VPP expiration_date is compared with, in epoch milliseconds;
    /// nil means the current time at each verification.
    public var nowMilliseconds: Int64?
    /// The environment the receipt must come from; nil accepts any.
    public var environment: ReceiptEnvironment?

    public static let deviceIdentifierLengths = 1...64

    /// A device identifier a caller passed, refusing lengths no device has.
    public static func checkedDeviceIdentifier(_ bytes: [UInt8]) throws(ReceiptError) -> [UInt8] {
        guard deviceIdentifierLengths.contains(bytes.count) else {
            throw ReceiptError(.invalidArgument, "a device identifier of \(bytes.count) bytes (expected 16 on iOS, 6 on macOS)")
        }
        return bytes
    }

    public init(bundleID: String? = nil, applicationVersion: String? = nil, deviceIdentifier: [UInt8]? = nil,
                nowMilliseconds: Int64? = nil, environment: ReceiptEnvironment? = nil) {
        self.bundleID = bundleID
        self.applicationVersion = applicationVersion
        self.deviceIdentifier = deviceIdentifier
        self.nowMilliseconds = nowMilliseconds
        self.environment = environment
    }
}
