/// Unpadded base64url (RFC 4648 §5, RFC 7515 §2), as JWS segments are written.
/// Strict, so that one JWS has one spelling: no padding, no whitespace, no
/// character outside the URL alphabet, and the unused low bits of the last
/// character zero.
enum Base64URL {
    private static let invalid: UInt8 = 0xFF

    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: invalid, count: 256)
        for (value, char) in alphabet.enumerated() { table[Int(char)] = UInt8(value) }
        return table
    }()

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Each character's value pre-shifted into its place in a 24-bit quantum, one
    /// table per position (as `Base64`'s fast path): four lookups and three ORs a
    /// quantum; anything outside the alphabet sets bit 31.
    private static let quantumTables: [UInt32] = {
        var tables = [UInt32](repeating: 0x8000_0000, count: 4 * 256)
        for position in 0..<4 {
            for byte in 0..<256 where decodeTable[byte] != invalid {
                tables[position * 256 + byte] = UInt32(decodeTable[byte]) << (18 - 6 * position)
            }
        }
        return tables
    }()

    /// The decoded bytes of `segment`; `offset` is where it starts in the whole input, for errors.
    static func decode(_ segment: UnsafeBufferPointer<UInt8>, offset: Int) throws(ReceiptError) -> [UInt8] {
        guard segment.count % 4 != 1 else {
            throw ReceiptError(.badBase64URL, at: offset + segment.count,
                               "a base64url segment of \(segment.count) characters (a length of 4n+1 cannot be)")
        }
        let count = segment.count / 4 * 3 + max(0, segment.count % 4 - 1)
        return try [UInt8](unsafeUninitializedCapacity: count) { (buffer, initialized) throws(ReceiptError) in
            let (written, read) = quantumTables.withUnsafeBufferPointer { tables in
                decodeWholeQuanta(segment, tables: tables, into: buffer)
            }
            try decodeTable.withUnsafeBufferPointer { (table) throws(ReceiptError) in
                try decodeRest(segment, from: read, offset: offset, table: table, into: buffer, written: written)
            }
            initialized = count
        }
    }

    /// Whole quanta of four alphabet characters; stops at the first that holds
    /// anything else, and before the last quantum, which the careful path checks
    /// for its spare bits. Indices stay in bounds, so the wrapping operators cannot wrap.
    private static func decodeWholeQuanta(_ input: UnsafeBufferPointer<UInt8>, tables: UnsafeBufferPointer<UInt32>,
                                          into output: UnsafeMutableBufferPointer<UInt8>) -> (written: Int, read: Int) {
        var written = 0
        var index = 0
        while index &+ 4 < input.count {
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

    private static func decodeRest(_ segment: UnsafeBufferPointer<UInt8>, from start: Int, offset: Int,
                                   table: UnsafeBufferPointer<UInt8>, into output: UnsafeMutableBufferPointer<UInt8>,
                                   written alreadyWritten: Int) throws(ReceiptError) {
        var quantum: UInt32 = 0
        var filled = 0
        var written = alreadyWritten
        for index in start..<segment.count {
            let value = table[Int(segment[index])]
            guard value != invalid else {
                let byte = segment[index]
                let what = byte == UInt8(ascii: "=") ? "'=' padding (JWS segments are unpadded)"
                    : "byte 0x\(hexByte(byte)), which is not in the base64url alphabet"
                throw ReceiptError(.badBase64URL, at: offset + index, what)
            }
            quantum = quantum << 6 | UInt32(value)
            filled &+= 1
            if filled == 4 {
                output[written] = UInt8(truncatingIfNeeded: quantum >> 16)
                output[written &+ 1] = UInt8(truncatingIfNeeded: quantum >> 8)
                output[written &+ 2] = UInt8(truncatingIfNeeded: quantum)
                written &+= 3
                quantum = 0
                filled = 0
            }
        }
        // 2 characters carry 1 byte and 4 spare bits; 3 carry 2 bytes and 2 spare bits.
        let spareBits = filled == 2 ? 4 : filled == 3 ? 2 : 0
        guard quantum & ((1 << spareBits) - 1) == 0 else {
            throw ReceiptError(.badBase64URL, at: offset + segment.count - 1,
                               "the last character's unused bits are not zero (a second spelling of the same bytes)")
        }
        quantum >>= UInt32(spareBits)
        for shift in stride(from: (filled - 2) * 8, through: 0, by: -8) where filled >= 2 {
            output[written] = UInt8(truncatingIfNeeded: quantum >> UInt32(shift))
            written += 1
        }
    }

    static func encode(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let remaining = bytes.count - index
            let n = UInt32(bytes[index]) << 16 | (remaining > 1 ? UInt32(bytes[index + 1]) << 8 : 0)
                | (remaining > 2 ? UInt32(bytes[index + 2]) : 0)
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            if remaining > 1 { out.append(alphabet[Int(n >> 6 & 63)]) }
            if remaining > 2 { out.append(alphabet[Int(n & 63)]) }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}
