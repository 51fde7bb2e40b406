/// Instants in step details and messages: RFC 3339 in UTC, `2024-03-01T10:00:00Z`,
/// with milliseconds only when there are some (`…:00.250Z`). One form for receipts
/// and JWS alike, whatever form the signed data wrote its dates in.
@_spi(ReceiptInternal) public enum RFC3339Format {
    public static func utc(_ milliseconds: Int64) -> String {
        let fraction = milliseconds - floorDivide(milliseconds, 1000) * 1000
        // Written straight into the string's bytes: a step detail is made on every verification.
        guard fraction != 0 else { return AppStoreDateFormat.format(milliseconds, separator: "T", suffix: "Z") }
        let digits = String(fraction)
        return AppStoreDateFormat.format(milliseconds, separator: "T") + "." + String(repeating: "0", count: 3 - digits.count)
            + digits + "Z"
    }
}
