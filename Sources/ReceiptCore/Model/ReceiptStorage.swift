/// The bytes a parsed receipt borrows from: its DER/BER encoding, the payload
/// (inside that encoding, or joined from BER chunks), and a text arena holding a
/// NUL-terminated copy of every string and date. Immutable after init; the C ABI
/// hands out pointers into it that live as long as the receipt.
final class ReceiptStorage: @unchecked Sendable {
    let encoded: UnsafeMutableBufferPointer<UInt8>
    /// Set when BER chunks had to be joined; otherwise the payload lies inside `encoded`.
    private let joinedPayload: UnsafeMutableBufferPointer<UInt8>?
    let payload: UnsafeBufferPointer<UInt8>
    let text: UnsafeMutableBufferPointer<UInt8>

    init(encoded source: [UInt8], payload location: PayloadLocation, text textBytes: [UInt8]) {
        encoded = UnsafeMutableBufferPointer.allocate(capacity: max(source.count, 1))
        _ = encoded.initialize(from: source)
        switch location {
        case .inside(let range):
            joinedPayload = nil
            payload = UnsafeBufferPointer(rebasing: encoded[range])
        case .joined(let bytes):
            let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(bytes.count, 1))
            _ = buffer.initialize(from: bytes)
            joinedPayload = buffer
            payload = UnsafeBufferPointer(rebasing: buffer[0..<bytes.count])
        }
        text = UnsafeMutableBufferPointer.allocate(capacity: max(textBytes.count, 1))
        _ = text.initialize(from: textBytes)
    }

    deinit {
        encoded.deallocate()
        joinedPayload?.deallocate()
        text.deallocate()
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
}

enum PayloadLocation {
    case inside(Range<Int>)
    case joined([UInt8])
}
