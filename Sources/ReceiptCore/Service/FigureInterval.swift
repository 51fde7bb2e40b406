/// The intervals a store's figures are given by, in UTC: days, weeks (from Monday, as ISO
/// 8601 counts them) and calendar months.
public enum FigureInterval: String, Sendable, CaseIterable {
    case day, week, month

    public static let dayMilliseconds = CivilTime.millisecondsPerDay

    /// The day (since 1970-01-01 UTC) an instant falls in.
    public static func day(of milliseconds: Int64) -> Int64 {
        milliseconds >= 0 ? milliseconds / dayMilliseconds : (milliseconds - dayMilliseconds + 1) / dayMilliseconds
    }

    /// The day of an ISO 8601 calendar date (`2026-11-27`); nil for anything else.
    public static func day(ofDate text: String) -> Int64? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              parts.allSatisfy({ $0.utf8.allSatisfy { (48...57).contains($0) } }),
              let year = Int64(parts[0]), let month = Int64(parts[1]), let day = Int64(parts[2]),
              (1...12).contains(month), (1...CivilTime.daysInMonth(year: year, month: month)).contains(day) else { return nil }
        return CivilTime.daysFromCivil(year: year, month: month, day: day)
    }

    /// The instants the figures take: from 2008-01-01 (before the App Store) to the last
    /// millisecond of 9999-12-31, so that no sum or interval over them can overflow.
    public static let instants: ClosedRange<Int64> = 1_199_145_600_000...253_402_300_799_999
    public static let instantsText = "epoch milliseconds or a date (2026-11-27) from 2008-01-01 to 9999-12-31"

    /// An instant as the figures take it: epoch milliseconds, or a date (`2026-11-27`,
    /// midnight UTC), within `instants`; nil for anything else.
    public static func instant(_ text: String) -> Int64? {
        guard let milliseconds = Int64(text) ?? day(ofDate: text).map({ $0 * dayMilliseconds }),
              instants.contains(milliseconds) else { return nil }
        return milliseconds
    }

    /// A day as its ISO 8601 calendar date (`2026-11-27`).
    public static func date(ofDay day: Int64) -> String {
        // The App Store's "yyyy-MM-dd HH:mm:ss" at midnight, cut to its date.
        String(AppStoreDateFormat.format(day * dayMilliseconds).split(separator: " ")[0])
    }

    /// The ISO 8601 calendar date (UTC) an instant falls on.
    public static func date(of milliseconds: Int64) -> String { date(ofDay: day(of: milliseconds)) }

    /// The first day of the interval that holds `day`.
    public func firstDay(holding day: Int64) -> Int64 {
        switch self {
        case .day:
            return day
        case .week:
            // CivilTime counts weekdays from Sunday (0); an ISO week starts on Monday.
            return day - (CivilTime.weekday(daysSinceEpoch: day) + 6) % 7
        case .month:
            let date = CivilTime.civilFromDays(day)
            return CivilTime.daysFromCivil(year: date.year, month: date.month, day: 1)
        }
    }

    /// The first day of the interval after the one that starts on `first`.
    public func nextFirstDay(after first: Int64) -> Int64 {
        switch self {
        case .day: return first + 1
        case .week: return first + 7
        case .month:
            let date = CivilTime.civilFromDays(first)
            return first + CivilTime.daysInMonth(year: date.year, month: date.month)
        }
    }

    /// The intervals that meet [from, to) (epoch milliseconds), as their first days, at most
    /// `limit`; nil past the limit.
    public func intervals(from: Int64, to: Int64, limit: Int) -> [Int64]? {
        var firsts: [Int64] = []
        guard from < to else { return firsts }
        var first = firstDay(holding: Self.day(of: from))
        while first * Self.dayMilliseconds < to {
            guard firsts.count < limit else { return nil }
            firsts.append(first)
            first = nextFirstDay(after: first)
        }
        return firsts
    }
}
