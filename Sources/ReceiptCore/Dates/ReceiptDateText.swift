/// Instants given as text outside a receipt (a CLI's `--now` or `--at`, a test's
/// instant): RFC 3339, `2024-01-01T00:00:00Z`, with optional fractional seconds
/// and `Z` or any `±hh:mm` offset (`t` and `z` in lower case too). The receipt
/// forms (`+hhmm`, no colon) are accepted as well. Anything else is nil.
public enum ReceiptDateText {
    public static func epochMilliseconds(_ text: String) -> Int64? {
        var bytes = Array(text.utf8)
        if bytes.count > 10, bytes[10] == UInt8(ascii: "t") { bytes[10] = UInt8(ascii: "T") }
        if bytes.last == UInt8(ascii: "z") { bytes[bytes.count - 1] = UInt8(ascii: "Z") }
        // RFC 3339's "+hh:mm" is the receipts' "+hhmm" with a colon.
        let count = bytes.count
        if count >= 25, bytes[count - 3] == UInt8(ascii: ":"),
           bytes[count - 6] == UInt8(ascii: "+") || bytes[count - 6] == UInt8(ascii: "-") {
            bytes.remove(at: count - 3)
        }
        return bytes.withUnsafeBufferPointer { ReceiptDateParser.epochMilliseconds($0, in: 0..<$0.count) }
    }
}
