/// The library's version; Include/receipt.h carries the same numbers as macros,
/// and a test checks they agree.
public enum ReceiptVersion {
    public static let major = 0
    public static let minor = 1
    public static let patch = 0
    public static let string: StaticString = "0.1.0"
}
