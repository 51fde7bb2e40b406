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

    private static let quantumTables = Base64.quantumTables(from: decodeTable)

    /// The decoded bytes of `segment`; `offset` is where it starts in the whole input, for errors.
    static func decode(_ segment: UnsafeBufferPointer<UInt8>, offset: Int) throws(ReceiptError) -> [UInt8] {
        guard segment.count % 4 != 1 else {
            throw ReceiptError(.badBase64URL, at: offset + segment.count,
                               "a base64url segment of \(segment.count) characters (a length of 4n+1 cannot be)")
        }
        let count = segment.count / 4 * 3 + max(0, segment.count % 4 - 1)
        return try [UInt8](unsafeUninitializedCapacity: count) { (buffer, initialized) throws(ReceiptError) in
            let (written, read) = quantumTables.withUnsafeBufferPointer { tables in
                Base64.decodeWholeQuanta(segment, tables: tables, into: buffer, leavingLast: true)
            }
            try decodeTable.withUnsafeBufferPointer { (table) throws(ReceiptError) in
                try decodeRest(segment, from: read, offset: offset, table: table, into: buffer, written: written)
            }
            initialized = count
        }
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
        bytes.withUnsafeBufferPointer { Base64.encode($0, alphabet: alphabet, padded: false) }
    }
}
