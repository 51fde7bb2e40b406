/// Instants in step details and messages: RFC 3339 in UTC, `2024-03-01T10:00:00Z`,
/// with milliseconds only when there are some (`…:00.250Z`). One form for receipts
/// and JWS alike, whatever form the signed data wrote its dates in.
enum RFC3339Format {
    static func utc(_ milliseconds: Int64) -> String {
        var text = AppStoreDateFormat.format(milliseconds)  // "2024-03-01 10:00:00"
        if let space = text.firstIndex(of: " ") { text.replaceSubrange(space...space, with: "T") }
        let fraction = milliseconds - floorDivide(milliseconds, 1000) * 1000
        if fraction != 0 {
            let digits = String(fraction)
            text += "." + String(repeating: "0", count: 3 - digits.count) + digits
        }
        return text + "Z"
    }
}
