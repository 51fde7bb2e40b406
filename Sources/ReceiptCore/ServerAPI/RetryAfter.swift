/// The `Retry-After` header in every form it comes in: the App Store Server API's
/// (an instant, in milliseconds since 1970: Apple's limits are per hour, so it names
/// when the hour's quota returns), and HTTP's (RFC 9110 §10.2.3): delay-seconds, or an
/// IMF-fixdate such as `Wed, 21 Oct 2015 07:28:00 GMT`.
enum RetryAfter {
    /// Longer waits are read as this: a day.
    static let maxSeconds: Int64 = 86_400

    /// A number of this many digits or more is an instant in milliseconds (2001 on), not
    /// a delay: no server asks for a wait of 31,000 years.
    static let instantDigits = 13

    /// The wait in milliseconds from `nowSeconds`; nil when absent or unreadable;
    /// 0 for an instant already past.
    static func milliseconds(_ header: String?, nowSeconds: Int64) -> Int64? {
        guard let header else { return nil }
        let text = trimmed(header)
        if !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int64(text) {
            if text.utf8.count >= instantDigits {
                return max(0, min(number - nowSeconds * 1000, maxSeconds * 1000))
            }
            return min(number, maxSeconds) * 1000
        }
        guard let date = imfFixdate(text) else { return nil }
        return max(0, min(date - nowSeconds, maxSeconds)) * 1000
    }

    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Epoch seconds of `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func imfFixdate(_ text: String) -> Int64? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[0].count == 4, parts[0].last == ",", parts[5] == "GMT",
              let day = Int64(parts[1]), parts[1].count == 2, let month = months.firstIndex(of: String(parts[2])),
              let year = Int64(parts[3]), parts[3].count == 4 else { return nil }
        let clock = parts[4].split(separator: ":")
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }),
              let hour = Int64(clock[0]), let minute = Int64(clock[1]), let second = Int64(clock[2]),
              hour < 24, minute < 60, second < 61,
              (1...CivilTime.daysInMonth(year: year, month: Int64(month + 1))).contains(day) else { return nil }
        let days = CivilTime.daysFromCivil(year: year, month: Int64(month + 1), day: day)
        return days * 86_400 + hour * 3600 + minute * 60 + second
    }

    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    static func trimmed(_ text: String) -> String {
        let bytes = Array(text.utf8)
        guard let first = bytes.firstIndex(where: { $0 != 0x20 && $0 != 0x09 }),
              let last = bytes.lastIndex(where: { $0 != 0x20 && $0 != 0x09 }) else { return "" }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}
