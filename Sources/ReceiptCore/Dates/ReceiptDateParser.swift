/// Parses the IA5String dates receipts carry, in exactly the forms seen:
/// `2023-05-09T23:20:55Z`, with fractional seconds (`…:55.123Z`), and with a numeric
/// offset and no colon (`2020-10-16T14:29:30+0300`). The empty string means absent
/// and is handled by the caller. Anything else is an error, never a guess.
enum ReceiptDateParser {
    /// Milliseconds since the Unix epoch, or nil when the text is in no known form.
    static func epochMilliseconds(_ bytes: UnsafeBufferPointer<UInt8>, in range: Range<Int>) -> Int64? {
        let start = range.lowerBound
        let end = range.upperBound
        // "YYYY-MM-DDTHH:MM:SS" is fixed-width: read it at fixed offsets.
        guard end - start >= 20,
              bytes[start + 4] == UInt8(ascii: "-"), bytes[start + 7] == UInt8(ascii: "-"),
              bytes[start + 10] == UInt8(ascii: "T"), bytes[start + 13] == UInt8(ascii: ":"),
              bytes[start + 16] == UInt8(ascii: ":"),
              let year = number(bytes, start, 4), let month = number(bytes, start + 5, 2),
              let day = number(bytes, start + 8, 2), let hour = number(bytes, start + 11, 2),
              let minute = number(bytes, start + 14, 2), let second = number(bytes, start + 17, 2),
              (1...12).contains(month), day >= 1, day <= CivilTime.daysInMonth(year: year, month: month),
              hour < 24, minute < 60, second < 60 else { return nil }

        var cursor = start + 19
        var milliseconds: Int64 = 0
        if bytes[cursor] == UInt8(ascii: ".") {
            cursor += 1
            let fractionStart = cursor
            var scale: Int64 = 100
            while cursor < end, let digit = digitValue(bytes[cursor]) {
                milliseconds += digit * scale
                scale /= 10
                cursor += 1
            }
            guard cursor > fractionStart, cursor - fractionStart <= 9, cursor < end else { return nil }
        }

        let offsetMinutes: Int64
        switch bytes[cursor] {
        case UInt8(ascii: "Z"):
            offsetMinutes = 0
            cursor += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard end - cursor >= 5, let offsetHours = number(bytes, cursor + 1, 2),
                  let offsetMins = number(bytes, cursor + 3, 2), offsetHours < 24, offsetMins < 60 else { return nil }
            offsetMinutes = (bytes[cursor] == UInt8(ascii: "+") ? 1 : -1) * (offsetHours * 60 + offsetMins)
            cursor += 5
        default:
            return nil
        }
        guard cursor == end else { return nil }

        let days = CivilTime.daysFromCivil(year: year, month: month, day: day)
        let secondsOfDay = hour * 3600 + minute * 60 + second
        return days * CivilTime.millisecondsPerDay + (secondsOfDay - offsetMinutes * 60) * 1000 + milliseconds
    }

    @inline(__always)
    private static func number(_ bytes: UnsafeBufferPointer<UInt8>, _ at: Int, _ count: Int) -> Int64? {
        var value: Int64 = 0
        for index in at..<at + count {
            guard let digit = digitValue(bytes[index]) else { return nil }
            value = value * 10 + digit
        }
        return value
    }

    @inline(__always)
    private static func digitValue(_ byte: UInt8) -> Int64? {
        let digit = byte &- UInt8(ascii: "0")
        return digit < 10 ? Int64(digit) : nil
    }
}
