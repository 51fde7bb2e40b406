/// Where trust may come from. Never the system store: only these pins and the
/// certificates a caller adds.
public struct TrustOptions: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Apple's roots, recognised by their pinned SHA-256 fingerprints: the Apple Inc.
    /// Root CA for receipts, Apple Root CA - G3 for JWS. On by default.
    public static let appleRoot = TrustOptions(rawValue: 1)
    /// Xcode's StoreKit Testing certificate, pinned the same way. Only on request.
    public static let xcodeStoreKit = TrustOptions(rawValue: 2)

    /// Options from flags a caller passed, refusing bits that mean nothing.
    public init(checkedRawValue: UInt32) throws(ReceiptError) {
        let known: TrustOptions = [.appleRoot, .xcodeStoreKit]
        guard checkedRawValue & ~known.rawValue == 0 else {
            throw ReceiptError(.invalidArgument, "unknown trust flags 0x\(String(checkedRawValue, radix: 16))")
        }
        self.init(rawValue: checkedRawValue)
    }
}

/// A certificate the caller trusts in addition to the pins, e.g. a test CA's root.
public struct TrustAnchor: Sendable {
    let certificate: X509Certificate

    /// One certificate, DER or PEM. Anything else throws `.badAnchor`.
    public init(_ bytes: [UInt8]) throws(ReceiptError) {
        do {
            certificate = try X509Certificate(derOrPEM: bytes)
        } catch {
            throw ReceiptError(.badAnchor, error.detail)
        }
    }

    public var subject: String { certificate.subject }
}

/// The pinned anchors. A receipt or JWS carries its root; the bytes it carries
/// are trusted only when their SHA-256 equals one of these, and only for the
/// format that pin signs: the Apple Inc. Root CA and Xcode's StoreKit certificate
/// for receipts, Apple Root CA - G3 for JWS. `TrustOptions.appleRoot` enables
/// Apple's root of each format.
enum PinnedAnchor: CaseIterable {
    case appleRoot, xcodeStoreKit, appleRootG3

    enum Format { case receipt, jws }

    var option: TrustOptions { self == .xcodeStoreKit ? .xcodeStoreKit : .appleRoot }

    var format: Format { self == .appleRootG3 ? .jws : .receipt }

    var name: String {
        switch self {
        case .appleRoot: "Apple Inc. Root CA"
        case .xcodeStoreKit: "Xcode StoreKit Testing certificate"
        case .appleRootG3: "Apple Root CA - G3"
        }
    }

    var sha256: [UInt8] {
        switch self {
        case .appleRoot: PinnedAnchor.appleRootSHA256
        case .xcodeStoreKit: PinnedAnchor.xcodeStoreKitSHA256
        case .appleRootG3: PinnedAnchor.appleRootG3SHA256
        }
    }

    /// The pins `trust` enables for one format.
    static func enabled(by trust: TrustOptions, for format: Format) -> [PinnedAnchor] {
        allCases.filter { trust.contains($0.option) && $0.format == format }
    }

    private static let appleRootSHA256 = hexBytes("B0B1730ECBC7FF4505142C49F1295E6EDA6BCAED7E2C68C5BE91B5A11001F024")!
    private static let xcodeStoreKitSHA256 = hexBytes("FF0BA36E721D2DB741D2AA11E6112EF78BF7131B46C7F035B00891D045C864FE")!
    private static let appleRootG3SHA256 = hexBytes("63343ABFB89A6A03EBB57E9B3F5FA7BE7C4F5C756F3017B3A8C488C3653E9179")!

    /// Whether Apple's marker OIDs are required under this anchor. The StoreKit
    /// certificate signs receipts itself: no intermediate, no markers.
    var requiresAppleMarkers: Bool { self != .xcodeStoreKit }
}
