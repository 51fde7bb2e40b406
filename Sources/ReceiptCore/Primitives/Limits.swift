/// Bounds that keep time and memory proportional to the input, whatever it holds.
/// The defaults are far above any receipt seen (80 KB, 187 purchases) and far
/// below what would hurt a server.
public struct ParseLimits: Sendable, Equatable {
    /// Largest accepted input, in bytes, before base64 decoding. Never more than
    /// `ceilingInputBytes`, whatever is set here.
    public var maxInputBytes: Int = 32 << 20
    /// The receipt's tables hold offsets as 32-bit numbers.
    public static let ceilingInputBytes = Int(UInt32.max)
    /// Deepest BER nesting the reader follows.
    public var maxDepth: Int = 32
    /// Most attributes in the whole receipt, app and in-app together.
    public var maxAttributes: Int = 1_000_000
    /// Longest string value, in bytes.
    public var maxStringBytes: Int = 64 << 10
    /// Most primitive chunks a BER constructed OCTET STRING payload may be split
    /// into (Xcode writes one). Joining them never holds more than the payload.
    public var maxPayloadChunks: Int = 1 << 22

    /// Most certificates a receipt may carry for verification (receipt.h's
    /// RECEIPT_MAX_CERTIFICATES). Real receipts carry 1 (Xcode) to 3.
    public static let maxCertificates = 8

    public init() {}

    public static let `default` = ParseLimits()
}
