/// Strict standard-alphabet base64 (RFC 4648 §4), as clients send receipts.
/// Whitespace between characters is skipped (line-wrapped bodies); padding is
/// required to complete the last quantum; anything else is an error.
enum Base64 {
    private static let invalid: UInt8 = 0xFF
    private static let whitespace: UInt8 = 0xFE
    private static let padding: UInt8 = 0xFD

    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: invalid, count: 256)
        let alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8
        for (value, char) in alphabet.enumerated() { table[Int(char)] = UInt8(value) }
        for char in [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r")] {
            table[Int(char)] = whitespace
        }
        table[Int(UInt8(ascii: "="))] = padding
        return table
    }()

    static func isWhitespace(_ byte: UInt8) -> Bool { decodeTable[Int(byte)] == whitespace }

    /// Whether base64 text may hold `byte` at all: the alphabet, padding or whitespace.
    static func mayAppear(_ byte: UInt8) -> Bool { decodeTable[Int(byte)] != invalid }

    /// The most bytes `input` can decode to.
    static func maxDecodedCount(_ input: UnsafeBufferPointer<UInt8>) -> Int { input.count / 4 * 3 + 3 }

    /// The alphabet's values pre-shifted into their place in a 24-bit quantum, one
    /// 256-entry table per position in the quantum, so four lookups and three ORs
    /// decode four characters. Anything outside the alphabet sets bit 31, so one
    /// test sends the whole quantum to the careful path.
    private static let quantumTables = quantumTables(from: decodeTable)

    /// The quantum tables of any 64-character alphabet (`Base64URL` shares them):
    /// `decodeTable` maps an alphabet byte to its value, anything else to 64 or more.
    static func quantumTables(from decodeTable: [UInt8]) -> [UInt32] {
        var tables = [UInt32](repeating: 0x8000_0000, count: 4 * 256)
        for position in 0..<4 {
            for byte in 0..<256 where decodeTable[byte] < 64 {
                tables[position * 256 + byte] = UInt32(decodeTable[byte]) << (18 - 6 * position)
            }
        }
        return tables
    }

    /// Decodes into `output`, which holds at least `maxDecodedCount(input)` bytes;
    /// returns how many it wrote.
    static func decode(_ input: UnsafeBufferPointer<UInt8>,
                       into output: UnsafeMutableBufferPointer<UInt8>) throws(ReceiptError) -> Int {
        let (written, index) = quantumTables.withUnsafeBufferPointer { tables in
            decodeWholeQuanta(input, tables: tables, into: output)
        }
        // The rest, one character at a time: line breaks, padding, and errors.
        return try decodeTable.withUnsafeBufferPointer { (table) throws(ReceiptError) -> Int in
            try decodeRemainder(input, from: index, table: table, into: output, written: written)
        }
    }

    /// The fast path: whole quanta of four alphabet characters, as in an unwrapped
    /// body. Stops at the first quantum holding anything else, and, with
    /// `leavingLast`, before the input's last quantum (base64url checks its spare
    /// bits on the careful path). Indices stay below input.count and 3/4 of it, so
    /// the wrapping operators cannot wrap.
    static func decodeWholeQuanta(_ input: UnsafeBufferPointer<UInt8>, tables: UnsafeBufferPointer<UInt32>,
                                  into output: UnsafeMutableBufferPointer<UInt8>,
                                  leavingLast: Bool = false) -> (written: Int, read: Int) {
        var written = 0
        var index = 0
        let end = leavingLast ? input.count &- 1 : input.count
        while index &+ 4 <= end {
            let quantum = tables[Int(input[index])] | tables[256 &+ Int(input[index &+ 1])]
                | tables[512 &+ Int(input[index &+ 2])] | tables[768 &+ Int(input[index &+ 3])]
            if quantum & 0x8000_0000 != 0 { break }
            output[written] = UInt8(truncatingIfNeeded: quantum &>> 16)
            output[written &+ 1] = UInt8(truncatingIfNeeded: quantum &>> 8)
            output[written &+ 2] = UInt8(truncatingIfNeeded: quantum)
            written &+= 3
            index &+= 4
        }
        return (written, index)
    }

    private static func decodeRemainder(_ input: UnsafeBufferPointer<UInt8>, from start: Int,
                                        table: UnsafeBufferPointer<UInt8>, into output: UnsafeMutableBufferPointer<UInt8>,
                                        written alreadyWritten: Int) throws(ReceiptError) -> Int {
        var written = alreadyWritten
        var quantum: UInt32 = 0
        var filled = 0
        var paddingSeen = 0
        for offset in start..<input.count {
            let byte = input[offset]
            let value = table[Int(byte)]
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
                    output[written] = UInt8(truncatingIfNeeded: quantum >> 16)
                    output[written + 1] = UInt8(truncatingIfNeeded: quantum >> 8)
                    output[written + 2] = UInt8(truncatingIfNeeded: quantum)
                    written += 3
                    quantum = 0
                    filled = 0
                }
            }
        }
        switch (filled, paddingSeen) {
        case (0, 0):
            break
        case (2, 2):
            output[written] = UInt8(truncatingIfNeeded: quantum >> 4)
            written += 1
        case (3, 1):
            output[written] = UInt8(truncatingIfNeeded: quantum >> 10)
            output[written + 1] = UInt8(truncatingIfNeeded: quantum >> 2)
            written += 2
        default:
            throw ReceiptError(.badBase64, at: input.count,
                               "the last quantum has \(filled) characters and \(paddingSeen) '=' (the length is not a multiple of 4)")
        }
        return written
    }

    static let standardAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// `padded`: '=' completes the last quantum (base64); base64url leaves it short.
    static func encode(_ bytes: UnsafeBufferPointer<UInt8>, alphabet: [UInt8] = standardAlphabet,
                       padded: Bool = true) -> String {
        let length = encodedLength(bytes.count, padded: padded)
        guard length > 0 else { return "" }
        return String(unsafeUninitializedCapacity: length) { out in
            encode(bytes, alphabet: alphabet, padded: padded, into: out)
            return length
        }
    }

    /// The same text appended to `out` (a JSON answer being written): no String made.
    static func append(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        out.append(count: encodedLength(bytes.count, padded: true)) {
            encode(bytes, alphabet: standardAlphabet, padded: true, into: $0)
        }
    }

    static func encodedLength(_ count: Int, padded: Bool) -> Int {
        let rest = count % 3
        return count / 3 * 4 + (rest == 0 ? 0 : padded ? 4 : rest + 1)
    }

    /// Writes exactly encodedLength(bytes.count, padded:) bytes: whole quanta in one
    /// unchecked loop (this is most of a verifyReceipt answer's latest_receipt), then the tail.
    private static func encode(_ bytes: UnsafeBufferPointer<UInt8>, alphabet: [UInt8], padded: Bool,
                               into out: UnsafeMutableBufferPointer<UInt8>) {
        alphabet.withUnsafeBufferPointer { table in
            var (index, at) = (0, 0)
            while bytes.count - index >= 3 {
                let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
                out[at] = table[Int(n >> 18 & 63)]
                out[at + 1] = table[Int(n >> 12 & 63)]
                out[at + 2] = table[Int(n >> 6 & 63)]
                out[at + 3] = table[Int(n & 63)]
                (index, at) = (index + 3, at + 4)
            }
            let remaining = bytes.count - index
            guard remaining > 0 else { return }
            let n = UInt32(bytes[index]) << 16 | (remaining > 1 ? UInt32(bytes[index + 1]) << 8 : 0)
            out[at] = table[Int(n >> 18 & 63)]
            out[at + 1] = table[Int(n >> 12 & 63)]
            at += 2
            if remaining > 1 { out[at] = table[Int(n >> 6 & 63)]; at += 1 } else if padded { out[at] = UInt8(ascii: "="); at += 1 }
            if padded { out[at] = UInt8(ascii: "=") }
        }
    }
}

extension Base64 {
    /// Standard, padded base64 of `bytes`.
    static func encode(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBufferPointer { encode($0) }
    }

    /// The bytes of base64 text (line breaks allowed, as everywhere in this library).
    static func decode(_ text: [UInt8]) throws(ReceiptError) -> [UInt8] {
        try text.withUnsafeBufferPointer { (input) throws(ReceiptError) -> [UInt8] in
            var output = [UInt8](repeating: 0, count: maxDecodedCount(input))
            let written = try output.withUnsafeMutableBufferPointer { (buffer) throws(ReceiptError) in try decode(input, into: buffer) }
            output.removeLast(output.count - written)
            return output
        }
    }
}
