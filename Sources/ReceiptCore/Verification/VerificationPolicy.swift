/// What a receipt must say besides being signed (docs/FORMAT.md §3 steps 3–6, and the
/// environment). A nil
/// field is not checked, and the result reports that step as skipped.
public struct VerificationPolicy: Sendable, Equatable {
    /// Compared byte for byte as UTF-8, never by Unicode equivalence.
    public var bundleID: String?
    /// More bundle ids accepted besides `bundleID`, for a server that answers for
    /// several apps (`receipt serve --bundle-id A --bundle-id B`). Checked only with `bundleID` set.
    public var otherBundleIDs: [String] = []
    public var applicationVersion: String?
    /// 16 bytes (identifierForVendor) on iOS, 6 (en0 MAC address) on macOS.
    public var deviceIdentifier: [UInt8]?
    /// The instant the VPP expiration_date is compared with, in epoch milliseconds,
    /// and the instant a JWS without a signing date is judged at; nil means the
    /// current time for the former, and fails the latter closed.
    public var nowMilliseconds: Int64?
    /// The environment the receipt or JWS must come from; nil accepts any.
    public var environment: ReceiptEnvironment?
    /// The app's Apple id a JWS that names one must name (notifications,
    /// AppTransactions); required for production ones, as Apple's verifiers require.
    public var appAppleID: Int64?
    /// Whether the `revocation` step of JWS verification asks OCSP answers of the
    /// verifier's cache (RevocationMode); off by default.
    public var revocation: RevocationMode = .off

    /// Every bundle id the bundle_id step accepts; empty when it is not checked.
    public var expectedBundleIDs: [String] {
        guard let bundleID else { return [] }
        return [bundleID] + otherBundleIDs
    }

    public static let deviceIdentifierLengths = 1...64

    /// A device identifier a caller passed, refusing lengths no device has.
    public static func checkedDeviceIdentifier(_ bytes: [UInt8]) throws(ReceiptError) -> [UInt8] {
        guard deviceIdentifierLengths.contains(bytes.count) else {
            throw ReceiptError(.invalidArgument, "a device identifier of \(bytes.count) bytes (expected 16 on iOS, 6 on macOS)")
        }
        return bytes
    }

    public init(bundleID: String? = nil, applicationVersion: String? = nil, deviceIdentifier: [UInt8]? = nil,
                nowMilliseconds: Int64? = nil, environment: ReceiptEnvironment? = nil, appAppleID: Int64? = nil) {
        self.bundleID = bundleID
        self.applicationVersion = applicationVersion
        self.deviceIdentifier = deviceIdentifier
        self.nowMilliseconds = nowMilliseconds
        self.environment = environment
        self.appAppleID = appAppleID
    }
}
