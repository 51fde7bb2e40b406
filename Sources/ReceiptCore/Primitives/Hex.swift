/// Hexadecimal, both ways, for details, pins and tests.
func hexByte(_ byte: UInt8) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
}

func hexBytes(_ hex: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var iterator = hex.utf8.makeIterator()
    while let high = iterator.next(), let low = iterator.next() {
        bytes.append(UInt8(hexValue(high) << 4 | hexValue(low)))
    }
    return bytes
}

private func hexValue(_ char: UInt8) -> Int {
    switch char {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(char - UInt8(ascii: "0"))
    case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(char - UInt8(ascii: "a") + 10)
    case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(char - UInt8(ascii: "A") + 10)
    default: 0
    }
}
