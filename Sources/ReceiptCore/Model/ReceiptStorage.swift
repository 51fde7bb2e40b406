#if canImport(Glibc)
import Glibc
#endif

/// The bytes a parsed receipt borrows from: its DER/BER encoding, the payload
/// (inside that encoding, or joined from BER chunks), and a text arena holding a
/// NUL-terminated copy of every string and date. The parser fills it once; after
/// that it is immutable, and the C ABI hands out pointers into it that live as
/// long as the receipt. Every buffer is malloc'd here and freed in deinit, also
/// when a parse fails halfway.
final class ReceiptStorage: @unchecked Sendable {
    private(set) var encoded: UnsafeBufferPointer<UInt8>
    private(set) var payload = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
    private var joinedPayload: UnsafeMutablePointer<UInt8>?
    private(set) var text = UnsafeBufferPointer<UInt8>(start: nil, count: 0)

    /// Takes ownership of bytes from `ReceiptStorage.allocate`.
    init(adopting bytes: UnsafeMutableBufferPointer<UInt8>) {
        encoded = UnsafeBufferPointer(bytes)
    }

    deinit {
        free(UnsafeMutableRawPointer(mutating: encoded.baseAddress))
        free(joinedPayload)
        free(UnsafeMutableRawPointer(mutating: text.baseAddress))
    }

    /// Uninitialized bytes for a storage to adopt; nil when memory is exhausted.
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
        case .joined(let bytes):
            guard let buffer = ReceiptStorage.allocate(bytes.count) else { throw outOfMemory(bytes.count) }
            _ = buffer.initialize(from: bytes)
            joinedPayload = buffer.baseAddress
            payload = UnsafeBufferPointer(buffer)
        }
    }

    /// A text arena large enough for every string of the payload: each one is a
    /// TLV inside it, so its bytes plus a NUL never exceed the payload's size.
    func makeTextArena() throws(ReceiptError) -> TextArena {
        guard let buffer = ReceiptStorage.allocate(payload.count + 1) else { throw outOfMemory(payload.count + 1) }
        text = UnsafeBufferPointer(buffer)
        return TextArena(base: buffer.baseAddress!, capacity: buffer.count)
    }

    /// Gives back the arena's unused tail.
    func finishText(_ arena: TextArena) {
        if let shrunk = realloc(UnsafeMutableRawPointer(mutating: text.baseAddress), max(arena.used, 1)) {
            text = UnsafeBufferPointer(start: shrunk.assumingMemoryBound(to: UInt8.self), count: arena.used)
        }
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

/// Where the parser writes NUL-terminated copies of strings; a plain value so the
/// hot loop does not go through a class.
struct TextArena {
    let base: UnsafeMutablePointer<UInt8>
    let capacity: Int
    private(set) var used = 0

    init(base: UnsafeMutablePointer<UInt8>, capacity: Int) {
        self.base = base
        self.capacity = capacity
    }

    /// Copies the bytes and a NUL; returns where they went, or nil if they do not
    /// fit (which the arena's size rules out, but an error beats a crash).
    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) -> (offset: UInt32, length: UInt32)? {
        guard used + bytes.count + 1 <= capacity else { return nil }
        let offset = used
        if let source = bytes.baseAddress { (base + used).update(from: source, count: bytes.count) }
        base[used + bytes.count] = 0
        used += bytes.count + 1
        return (UInt32(offset), UInt32(bytes.count))
    }
}

enum PayloadLocation {
    case inside(Range<Int>)
    case joined([UInt8])
}
