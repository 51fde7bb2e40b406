/// Hexadecimal, both ways, for details, pins and tests.
func hexByte(_ byte: UInt8) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
}

/// Lowercase hex of `bytes`, made in one buffer (fingerprints are written per row of a batch).
@_spi(ReceiptInternal) public func hexString(_ bytes: [UInt8]) -> String {
    let digits: StaticString = "0123456789abcdef"
    return String(unsafeUninitializedCapacity: bytes.count * 2) { output in
        for (index, byte) in bytes.enumerated() {
            output[2 * index] = digits.utf8Start[Int(byte >> 4)]
            output[2 * index + 1] = digits.utf8Start[Int(byte & 0xF)]
        }
        return bytes.count * 2
    }
}

/// The bytes of hex text (either case; `:` separators allowed, as in `6c:40:08`), or
/// nil for anything else: an odd count, another character, nothing at all.
@_spi(ReceiptInternal) public func hexBytes(_ hex: String) -> [UInt8]? {
    let digits = hex.utf8.filter { $0 != UInt8(ascii: ":") }
    guard !digits.isEmpty, digits.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(digits.count / 2)
    for index in stride(from: 0, to: digits.count, by: 2) {
        guard let high = hexDigitValue(digits[index]), let low = hexDigitValue(digits[index + 1]) else { return nil }
        bytes.append(high << 4 | low)
    }
    return bytes
}

@_spi(ReceiptInternal) public func hexDigitValue(_ char: UInt8) -> UInt8? {
    switch char {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): char - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): char - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): char - UInt8(ascii: "A") + 10
    default: nil
    }
}
