/// The intervals a store's figures are given by, in UTC: days, weeks (from Monday, as ISO
/// 8601 counts them) and calendar months.
public enum FigureInterval: String, Sendable, CaseIterable {
    case day, week, month

    public static let dayMilliseconds = CivilTime.millisecondsPerDay

    /// The day (since 1970-01-01 UTC) an instant falls in.
    public static func day(of milliseconds: Int64) -> Int64 {
        milliseconds >= 0 ? milliseconds / dayMilliseconds : (milliseconds - dayMilliseconds + 1) / dayMilliseconds
    }

    /// The first day of the interval that holds `day`.
    public func firstDay(holding day: Int64) -> Int64 {
        switch self {
        case .day:
            return day
        case .week:
            // 1970-01-01 was a Thursday: three days after a Monday.
            let sinceMonday = ((day + 3) % 7 + 7) % 7
            return day - sinceMonday
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
