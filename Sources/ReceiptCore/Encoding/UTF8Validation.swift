/// Well-formed UTF-8 per RFC 3629 (no overlongs, no surrogates, nothing above U+10FFFF).
/// Checked once at parse time, so that Strings can be made later without repair.
enum UTF8Validation {
    /// Returns the offset of the first byte of the first invalid sequence, or nil.
    static func firstInvalidOffset(_ bytes: UnsafeBufferPointer<UInt8>, in range: Range<Int>) -> Int? {
        var index = range.lowerBound
        let end = range.upperBound
        guard let base = bytes.baseAddress else { return nil }
        while index < end {
            // Receipt strings are almost all ASCII: clear eight bytes per step while we can.
            if end &- index >= 8,
               UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                index &+= 8
                continue
            }
            let lead = bytes[index]
            if lead < 0x80 { index += 1; continue }
            let length: Int
            var lowerBound: UInt8 = 0x80
            var upperBound: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; lowerBound = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; upperBound = 0x9F
            case 0xF0: length = 4; lowerBound = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; upperBound = 0x8F
            default: return index
            }
            guard end - index >= length else { return index }
            let second = bytes[index + 1]
            guard second >= lowerBound && second <= upperBound else { return index }
            for continuation in 2..<length where bytes[index + continuation] & 0xC0 != 0x80 {
                return index
            }
            index += length
        }
        return nil
    }
}
