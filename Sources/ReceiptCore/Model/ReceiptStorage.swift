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
    /// False for a storage that borrows the caller's bytes (verdict-only parses).
    var ownsEncoding: Bool { block != nil }

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
        ReceiptError(.noMemory, "out of memory for \(count) bytes")
    }
}

extension ReceiptStorage {
    /// Storage holding the DER/BER bytes of an app receipt, decoding base64 when the
    /// input is text (InputForm says which). `borrowing` keeps DER input where it is
    /// instead of copying it: only for a receipt that dies before the caller's bytes
    /// do (see the type's documentation).
    static func holding(_ input: UnsafeBufferPointer<UInt8>, limits: ParseLimits,
                        borrowing: Bool = false) throws(ReceiptError) -> ReceiptStorage {
        switch try InputForm.kind(of: input, limits: limits) {
        case .der:
            if borrowing { return ReceiptStorage(borrowing: input) }
            let block = try allocateOrThrow(encodedCount: input.count)
            _ = UnsafeMutableBufferPointer(rebasing: block[0..<input.count]).initialize(from: input)
            return ReceiptStorage(adopting: block, encodedCount: input.count)
        case .base64(let firstIndex):
            let room = Base64.maxDecodedCount(input)
            let block = try allocateOrThrow(encodedCount: room)
            // The storage owns the block from here on, so every exit frees it.
            let storage = ReceiptStorage(adopting: block, encodedCount: room)
            let count = try InputForm.decodeBase64(input, firstIndex: firstIndex,
                                                   into: UnsafeMutableBufferPointer(rebasing: block[0..<room]))
            storage.trimEncoded(to: count)
            return storage
        }
    }

    private static func allocateOrThrow(encodedCount: Int) throws(ReceiptError) -> UnsafeMutableBufferPointer<UInt8> {
        guard let block = allocateBlock(encodedCount: encodedCount) else {
            throw ReceiptError(.noMemory, "out of memory for a \(encodedCount)-byte receipt")
        }
        return block
    }
}
