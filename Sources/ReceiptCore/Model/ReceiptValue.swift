/// A date as a receipt writes it and as the instant it denotes.
public struct ReceiptDate: Sendable, Equatable {
    /// The IA5String exactly as in the receipt, e.g. `2020-10-16T14:29:30+0300`.
    public let text: String
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public let millisecondsSince1970: Int64
}

/// A typed field value, for callers that walk fields generically.
public enum ReceiptValue: Sendable, Equatable {
    case string(String)
    case integer(Int64)
    case boolean(Bool)
    case date(ReceiptDate)
    case bytes([UInt8])
}

/// An attribute exactly as stored: known or not, it keeps its type, version and
/// value bytes (the content of the attribute's OCTET STRING).
public struct RawAttribute: Sendable, Equatable {
    public let type: Int64
    public let version: Int64
    public let value: [UInt8]
}
