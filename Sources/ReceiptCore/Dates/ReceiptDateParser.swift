/// Parses the IA5String dates receipts carry, in exactly the forms seen:
/// `2023-05-09T23:20:55Z`, with fractional seconds (`…:55.123Z`), and with a numeric
/// offset and no colon (`2020-10-16T14:29:30+0300`). The empty string means absent
/// and is handled by the caller. Anything else is an error, never a guess.
enum ReceiptDateParser {
    /// Milliseconds since the Unix epoch, or nil when the text is in no known form.
    static func epochMilliseconds(_ bytes: UnsafeBufferPointer<UInt8>, in range: Range<Int>) -> Int64? {
        var cursor = range.lowerBound
        let end = range.upperBound

        func digits(_ count: Int) -> Int64? {
            guard end - cursor >= count else { return nil }
            var value: Int64 = 0
            for _ in 0..<count {
                let byte = bytes[cursor]
                guard byte >= 0x30 && byte <= 0x39 else { return nil }
                value = value * 10 + Int64(byte - 0x30)
                cursor += 1
            }
            return value
        }
        func literal(_ char: UInt8) -> Bool {
            guard cursor < end && bytes[cursor] == char else { return false }
            cursor += 1
            return true
        }

        guard let year = digits(4), literal(UInt8(ascii: "-")),
              let month = digits(2), literal(UInt8(ascii: "-")),
              let day = digits(2), literal(UInt8(ascii: "T")),
              let hour = digits(2), literal(UInt8(ascii: ":")),
              let minute = digits(2), literal(UInt8(ascii: ":")),
              let second = digits(2) else { return nil }
        guard (1...12).contains(month), day >= 1, day <= CivilTime.daysInMonth(year: year, month: month),
              hour < 24, minute < 60, second < 60 else { return nil }

        var milliseconds: Int64 = 0
        if literal(UInt8(ascii: ".")) {
            var fractionDigits = 0
            var scale: Int64 = 100
            while cursor < end, bytes[cursor] >= 0x30, bytes[cursor] <= 0x39 {
                fractionDigits += 1
                guard fractionDigits <= 9 else { return nil }
                milliseconds += Int64(bytes[cursor] - 0x30) * scale
                scale /= 10
                cursor += 1
            }
            guard fractionDigits > 0 else { return nil }
        }

        var offsetMinutes: Int64 = 0
        if literal(UInt8(ascii: "Z")) {
            offsetMinutes = 0
        } else if cursor < end, bytes[cursor] == UInt8(ascii: "+") || bytes[cursor] == UInt8(ascii: "-") {
            let sign: Int64 = bytes[cursor] == UInt8(ascii: "+") ? 1 : -1
            cursor += 1
            guard let offsetHours = digits(2), let offsetMins = digits(2),
                  offsetHours < 24, offsetMins < 60 else { return nil }
            offsetMinutes = sign * (offsetHours * 60 + offsetMins)
        } else {
            return nil
        }
        guard cursor == end else { return nil }

        let days = CivilTime.daysFromCivil(year: year, month: month, day: day)
        let secondsOfDay = hour * 3600 + minute * 60 + second
        return days * CivilTime.millisecondsPerDay + (secondsOfDay - offsetMinutes * 60) * 1000 + milliseconds
    }
}
