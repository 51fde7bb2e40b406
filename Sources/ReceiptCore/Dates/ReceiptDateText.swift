/// Receipt date parsing for text that does not come from a receipt (a CLI's
/// `--now`, a test's instant): the same forms, the same strictness.
public enum ReceiptDateText {
    public static func epochMilliseconds(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { ReceiptDateParser.epochMilliseconds($0, in: 0..<$0.count) }
    }
}
