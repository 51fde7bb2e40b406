/// The App Store JSON's two textual date forms:
/// `2020-07-22 17:39:08 Etc/GMT` and `2020-07-22 10:39:08 America/Los_Angeles`.
///
/// Los Angeles time follows the US daylight-saving rules in force since 2007
/// (second Sunday of March to first Sunday of November, 02:00 local), and the
/// 1987–2006 rules (first Sunday of April to last Sunday of October) before that.
/// Receipts begin in 2008, so earlier history is not modelled; later years use the
/// 2007 rules, which is also what tz databases project.
enum AppStoreDateFormat {
    static let gmtSuffix: StaticString = " Etc/GMT"
    static let pacificSuffix: StaticString = " America/Los_Angeles"

    static func gmt(_ milliseconds: Int64) -> String {
        format(milliseconds, suffix: gmtSuffix)
    }

    static func pacific(_ milliseconds: Int64) -> String {
        format(pacificLocal(milliseconds), suffix: pacificSuffix)
    }

    /// The same two forms appended to JSON being written: no String is made (the
    /// verifyReceipt answer writes three dates per purchase, twice).
    static func appendGMT(_ milliseconds: Int64, to bytes: inout [UInt8]) {
        append(milliseconds, suffix: gmtSuffix, to: &bytes)
    }

    static func appendPacific(_ milliseconds: Int64, to bytes: inout [UInt8]) {
        append(pacificLocal(milliseconds), suffix: pacificSuffix, to: &bytes)
    }

    private static func pacificLocal(_ milliseconds: Int64) -> Int64 {
        let offsetHours: Int64 = isPacificDaylightTime(milliseconds) ? -7 : -8
        return milliseconds + offsetHours * 3_600_000
    }

    /// `separator`: between the date and the time (RFC 3339 writes `T`).
    static func format(_ milliseconds: Int64, separator: Unicode.Scalar = " ", suffix: StaticString = "") -> String {
        let length = 19 + suffix.utf8CodeUnitCount
        guard let fields = fixedWidthFields(milliseconds) else {
            return wideFormat(milliseconds, separator: separator, suffix: suffix)
        }
        return String(unsafeUninitializedCapacity: length) { buffer in
            write(fields, separator: separator, suffix: suffix, into: buffer)
        }
    }

    private static func append(_ milliseconds: Int64, suffix: StaticString, to bytes: inout [UInt8]) {
        guard let fields = fixedWidthFields(milliseconds) else {
            bytes.append(contentsOf: wideFormat(milliseconds, suffix: suffix).utf8)
            return
        }
        bytes.append(count: 19 + suffix.utf8CodeUnitCount) { _ = write(fields, suffix: suffix, into: $0) }
    }

    private typealias Fields = (year: Int64, month: Int64, day: Int64, hour: Int64, minute: Int64, second: Int64)

    private static func fields(_ milliseconds: Int64) -> Fields {
        let days = floorDivide(milliseconds, CivilTime.millisecondsPerDay)
        let secondsOfDay = (milliseconds - days * CivilTime.millisecondsPerDay) / 1000
        let (year, month, day) = CivilTime.civilFromDays(days)
        return (year, month, day, secondsOfDay / 3600, secondsOfDay / 60 % 60, secondsOfDay % 60)
    }

    /// Years 0–9999, which print in four digits; nil for the rest.
    private static func fixedWidthFields(_ milliseconds: Int64) -> Fields? {
        let all = fields(milliseconds)
        return (0...9999).contains(all.year) ? all : nil
    }

    private static func wideFormat(_ milliseconds: Int64, separator: Unicode.Scalar = " ", suffix: StaticString) -> String {
        let (year, month, day, hour, minute, second) = fields(milliseconds)
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))\(Character(separator))"
            + "\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))\(suffix)"
    }

    /// Fixed width, written digit by digit: the JSON renderer formats three of
    /// these per date, and interpolation made it the slowest part of rendering.
    private static func write(_ fields: Fields, separator: Unicode.Scalar = " ", suffix: StaticString,
                              into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        var at = 0
        func put(_ value: Int64, width: Int) {
            var remaining = value
            for position in stride(from: at + width - 1, through: at, by: -1) {
                buffer[position] = UInt8(ascii: "0") + UInt8(remaining % 10)
                remaining /= 10
            }
            at += width
        }
        func put(_ separator: Unicode.Scalar) {
            buffer[at] = UInt8(ascii: separator)
            at += 1
        }
        put(fields.year, width: 4); put("-"); put(fields.month, width: 2); put("-"); put(fields.day, width: 2); put(separator)
        put(fields.hour, width: 2); put(":"); put(fields.minute, width: 2); put(":"); put(fields.second, width: 2)
        suffix.withUTF8Buffer { bytes in
            for byte in bytes { buffer[at] = byte; at += 1 }
        }
        return at
    }

    static func isPacificDaylightTime(_ utcMilliseconds: Int64) -> Bool {
        let year = CivilTime.civilFromDays(floorDivide(utcMilliseconds, CivilTime.millisecondsPerDay)).year
        let (startMonth, startWeek, endMonth, endWeek): (Int64, Int64, Int64, Int64) =
            year >= 2007 ? (3, 2, 11, 1) : (4, 1, 10, -1)
        // Transitions happen at 02:00 local: 10:00 UTC when leaving PST, 09:00 UTC when leaving PDT.
        let start = nthSunday(year: year, month: startMonth, n: startWeek) * CivilTime.millisecondsPerDay + 10 * 3_600_000
        let end = nthSunday(year: year, month: endMonth, n: endWeek) * CivilTime.millisecondsPerDay + 9 * 3_600_000
        return utcMilliseconds >= start && utcMilliseconds < end
    }

    /// Days since the epoch of the n-th Sunday of a month; n = -1 means the last one.
    private static func nthSunday(year: Int64, month: Int64, n: Int64) -> Int64 {
        if n < 0 {
            let last = CivilTime.daysFromCivil(year: year, month: month, day: CivilTime.daysInMonth(year: year, month: month))
            return last - CivilTime.weekday(daysSinceEpoch: last)
        }
        let first = CivilTime.daysFromCivil(year: year, month: month, day: 1)
        let firstSunday = first + (7 - CivilTime.weekday(daysSinceEpoch: first)) % 7
        return firstSunday + (n - 1) * 7
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}
