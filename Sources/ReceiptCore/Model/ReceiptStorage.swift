#if canImport(Glibc)
import Glibc
#endif

/// The bytes a parsed receipt borrows from: its DER/BER encoding, the payload
/// (inside that encoding, or joined from BER chunks), and a text arena holding a
/// NUL-terminated copy of every string and date. The parser fills it once; after
/// that it is immutable, and the C ABI hands out pointers into it that live as
/// long as the receipt. Every buffer is malloc'd here and freed in deinit, also
/// when a parse fails halfway.
///
/// A verdict (`ReceiptParser.parse` with `.verdictFields`) instead borrows the
/// caller's bytes for the length of one call and terminates no string: that
/// receipt never leaves the verifier, and nothing reads its text as C strings.
final class ReceiptStorage: @unchecked Sendable {
    private(set) var encoded: UnsafeBufferPointer<UInt8>
    private(set) var payload = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
    private var joinedPayload: UnsafeMutablePointer<UInt8>?
    private(set) var text = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
    /// The one allocation holding the encoding and, after it, the text arena; nil
    /// when the encoding is borrowed.
    private let block: UnsafeMutableBufferPointer<UInt8>?

    /// Takes ownership of a block from `allocateBlock(encodedCount:)`, whose first
    /// `encodedCount` bytes the caller fills with the encoding.
    init(adopting block: UnsafeMutableBufferPointer<UInt8>, encodedCount: Int) {
        self.block = block
        encoded = UnsafeBufferPointer(rebasing: block[0..<encodedCount])
    }

    /// Borrows bytes that outlive this storage; see the type's documentation.
    init(borrowing bytes: UnsafeBufferPointer<UInt8>) {
        block = nil
        encoded = bytes
    }

    deinit {
        free(block?.baseAddress)
        free(joinedPayload)
    }

    /// Room for an encoding of up to `encodedCount` bytes and the text arena after
    /// it (the payload is never longer than the encoding): one allocation per
    /// receipt instead of two. Nil when memory is exhausted.
    static func allocateBlock(encodedCount: Int) -> UnsafeMutableBufferPointer<UInt8>? {
        let (doubled, overflow) = encodedCount.multipliedReportingOverflow(by: 2)
        guard !overflow, doubled < Int.max else { return nil }
        return allocate(doubled + 1)
    }

    /// Uninitialized bytes; nil when memory is exhausted.
    static func allocate(_ count: Int) -> UnsafeMutableBufferPointer<UInt8>? {
        guard let memory = malloc(max(count, 1)) else { return nil }
        return UnsafeMutableBufferPointer(start: memory.assumingMemoryBound(to: UInt8.self), count: count)
    }

    /// Base64 decodes to fewer bytes than it was given room for.
    func trimEncoded(to count: Int) {
        encoded = UnsafeBufferPointer(rebasing: encoded[0..<count])
    }

    func placePayload(_ location: PayloadLocation) throws(ReceiptError) {
        switch location {
        case .inside(let range):
            payload = UnsafeBufferPointer(rebasing: encoded[range])
        case .chunked(let chunks):
            guard let buffer = ReceiptStorage.allocate(chunks.byteCount) else { throw outOfMemory(chunks.byteCount) }
            joinedPayload = buffer.baseAddress
            try SignedDataReader.join(chunks, in: encoded, into: buffer)
            payload = UnsafeBufferPointer(buffer)
        }
    }

    /// The arena the parser terminates strings in: one copy of the whole payload,
    /// plus a byte so that a string ending the payload has room for its NUL.
    func makeTextArena() -> TextArena {
        guard let block else { preconditionFailure("a borrowed encoding has no text arena") }
        // The block holds 2 * (encoding's room) + 1 bytes and the payload is no longer
        // than the encoding, so the arena always fits after the encoding.
        let arena = UnsafeMutableBufferPointer(rebasing: block[encoded.count..<(encoded.count + payload.count + 1)])
        if let source = payload.baseAddress { arena.baseAddress!.update(from: source, count: payload.count) }
        arena[payload.count] = 0
        text = UnsafeBufferPointer(arena)
        return TextArena(base: arena.baseAddress!)
    }

    /// For a verdict: the text is read in place in the payload, unterminated.
    func useUnterminatedText() -> TextArena {
        text = payload
        return TextArena(base: nil)
    }

    func string(_ value: StoredValue) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: text[Int(value.textOffset)..<Int(value.textOffset + value.textLength)]),
               as: UTF8.self)
    }

    func cString(_ value: StoredValue) -> UnsafePointer<CChar> {
        UnsafeRawPointer(text.baseAddress! + Int(value.textOffset)).assumingMemoryBound(to: CChar.self)
    }

    func payloadBytes(offset: UInt32, length: UInt32) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: payload[Int(offset)..<Int(offset + length)])
    }

    private func outOfMemory(_ count: Int) -> ReceiptError {
        ReceiptError(.limitExceeded, "out of memory for \(count) bytes")
    }
}

/// NUL-terminated strings for the C ABI without a copy per string. The arena is
/// a copy of the payload, so a string's text sits at its payload offset, and
/// terminating it overwrites the byte after it. That byte is never text: the TLVs
/// of the typed strings never overlap, and each has a header of at least two bytes
/// before its content, so what follows a string's content is the next element's
/// header or the arena's extra final byte.
struct TextArena {
    /// Nil when strings are read in place, unterminated (a verdict's parse).
    let base: UnsafeMutablePointer<UInt8>?

    /// Terminates the string at `range` of the payload; returns where it is.
    @inline(__always)
    func terminate(_ range: Range<Int>) -> (offset: UInt32, length: UInt32) {
        base?[range.upperBound] = 0
        return (UInt32(truncatingIfNeeded: range.lowerBound), UInt32(truncatingIfNeeded: range.count))
    }
}

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
