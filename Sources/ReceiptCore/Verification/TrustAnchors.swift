/// Where trust may come from. Never the system store: only these pins and the
/// certificates a caller adds.
public struct TrustOptions: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The Apple Inc. Root CA, recognised by its pinned SHA-256 fingerprint. On by default.
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

/// The pinned anchors. A receipt carries its root; the bytes it carries are
/// trusted only when their SHA-256 equals one of these.
enum PinnedAnchor: CaseIterable {
    case appleRoot, xcodeStoreKit

    var option: TrustOptions { self == .appleRoot ? .appleRoot : .xcodeStoreKit }

    var name: String { self == .appleRoot ? "Apple Inc. Root CA" : "Xcode StoreKit Testing certificate" }

    var sha256: [UInt8] { self == .appleRoot ? PinnedAnchor.appleRootSHA256 : PinnedAnchor.xcodeStoreKitSHA256 }

    private static let appleRootSHA256 = hexBytes("B0B1730ECBC7FF4505142C49F1295E6EDA6BCAED7E2C68C5BE91B5A11001F024")!
    private static let xcodeStoreKitSHA256 = hexBytes("FF0BA36E721D2DB741D2AA11E6112EF78BF7131B46C7F035B00891D045C864FE")!

    /// Whether Apple's marker OIDs are required under this anchor. The StoreKit
    /// certificate signs receipts itself: no intermediate, no markers.
    var requiresAppleMarkers: Bool { self == .appleRoot }
}
