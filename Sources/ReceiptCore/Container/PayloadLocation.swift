/// Where a receipt's payload is, as the container found it: a range of the
/// encoding, or BER chunks to join (ReceiptStorage.placePayload).
enum PayloadLocation: Equatable {
    case inside(Range<Int>)
    /// A BER payload in several chunks, to be joined into a buffer of its own.
    case chunked(PayloadChunks)
}

/// Where a chunked payload's constructed OCTET STRING is, and how many bytes its
/// chunks hold together.
struct PayloadChunks: Equatable {
    let octets: Range<Int>
    let depth: Int
    let maxDepth: Int
    let byteCount: Int
}
