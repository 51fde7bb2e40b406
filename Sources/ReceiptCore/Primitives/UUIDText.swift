/// The text form of a UUID (RFC 9562 §4): 8-4-4-4-12 hexadecimal digits, either case.
/// What Apple's model gives an appAccountToken, an issuer id and a nonce.
@_spi(ReceiptInternal) public enum UUIDText {
    public static let length = 36

    public static func isWellFormed(_ text: String) -> Bool {
        guard text.utf8.count == length else { return false }
        for (index, byte) in text.utf8.enumerated() {
            let isHyphen = [8, 13, 18, 23].contains(index)
            guard isHyphen ? byte == UInt8(ascii: "-") : hexDigitValue(byte) != nil else { return false }
        }
        return true
    }
}
