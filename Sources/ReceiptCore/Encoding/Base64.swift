/// Strict standard-alphabet base64 (RFC 4648 §4), as clients send receipts.
/// Whitespace between characters is skipped (line-wrapped PEM-style bodies);
/// padding is required to complete the last quantum; anything else is an error.
enum Base64 {
    private static let invalid: UInt8 = 0xFF
    private static let whitespace: UInt8 = 0xFE
    private static let padding: UInt8 = 0xFD

    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: invalid, count: 256)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        for (value, char) in alphabet.enumerated() { table[Int(char)] = UInt8(value) }
        for char in [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r")] {
            table[Int(char)] = whitespace
        }
        table[Int(UInt8(ascii: "="))] = padding
        return table
    }()

    static func isWhitespace(_ byte: UInt8) -> Bool { decodeTable[Int(byte)] == whitespace }

    /// The most bytes `input` can decode to.
    static func maxDecodedCount(_ input: UnsafeBufferPointer<UInt8>) -> Int { input.count / 4 * 3 + 3 }

    /// Decodes into `output`, which holds at least `maxDecodedCount(input)` bytes;
    /// returns how many it wrote.
    static func decode(_ input: UnsafeBufferPointer<UInt8>,
                       into output: UnsafeMutableBufferPointer<UInt8>) throws(ReceiptError) -> Int {
        var written = 0
        func emit(_ byte: UInt8) {
            output[written] = byte
            written += 1
        }
        var quantum: UInt32 = 0
        var filled = 0
        var paddingSeen = 0
        for (offset, byte) in input.enumerated() {
            let value = decodeTable[Int(byte)]
            switch value {
            case whitespace:
                continue
            case padding:
                paddingSeen += 1
                if filled + paddingSeen > 4 || filled < 2 {
                    throw ReceiptError(.badBase64, at: offset, "misplaced '=' padding")
                }
            case invalid:
                throw ReceiptError(.badBase64, at: offset, "byte 0x\(hexByte(byte)) is not in the base64 alphabet")
            default:
                if paddingSeen > 0 {
                    throw ReceiptError(.badBase64, at: offset, "data follows '=' padding")
                }
                quantum = (quantum << 6) | UInt32(value)
                filled += 1
                if filled == 4 {
                    emit(UInt8(truncatingIfNeeded: quantum >> 16))
                    emit(UInt8(truncatingIfNeeded: quantum >> 8))
                    emit(UInt8(truncatingIfNeeded: quantum))
                    quantum = 0
                    filled = 0
                }
            }
        }
        switch (filled, paddingSeen) {
        case (0, 0):
            break
        case (2, 2):
            emit(UInt8(truncatingIfNeeded: quantum >> 4))
        case (3, 1):
            emit(UInt8(truncatingIfNeeded: quantum >> 10))
            emit(UInt8(truncatingIfNeeded: quantum >> 2))
        default:
            throw ReceiptError(.badBase64, at: input.count,
                               "the last quantum has \(filled) characters and \(paddingSeen) '=' (the length is not a multiple of 4)")
        }
        return written
    }

    static func encode(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out = [UInt8]()
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= bytes.count {
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], alphabet[Int(n & 63)]]
            index += 3
        }
        let rest = bytes.count - index
        if rest > 0 {
            let n = UInt32(bytes[index]) << 16 | (rest == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)]]
            out += rest == 2 ? [alphabet[Int(n >> 6 & 63)], UInt8(ascii: "=")] : [UInt8(ascii: "="), UInt8(ascii: "=")]
        }
        return String(decoding: out, as: UTF8.self)
    }
}
