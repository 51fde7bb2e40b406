/// The length of an auto-renewable subscription's period, as Apple sells them (one week,
/// one, two, three or six months, one year), told from a period's own dates where no
/// catalog says it: what a period's price is worth per month (MRR). Monthly plans with a
/// 12-month commitment bill monthly, so their periods are months.
public enum BillingPeriod: String, Sendable, CaseIterable {
    case week, month, twoMonths = "two_months", threeMonths = "three_months", sixMonths = "six_months", year

    static let day: Int64 = 86_400_000

    /// The period whose calendar lengths include `milliseconds` (from purchase to expiry),
    /// to the day; nil for a length no plan has (Sandbox's accelerated renewals last minutes).
    public static func of(milliseconds: Int64) -> BillingPeriod? {
        guard milliseconds > 0 else { return nil }
        let days = milliseconds.clampedAdding(day / 2) / day
        return allCases.first { $0.days.contains(days) }
    }

    /// The SQL condition that the length in milliseconds `length` (an expression) is of some plan,
    /// as `of(milliseconds:)` tells it: its days rounded to the nearest in one of the plans' ranges,
    /// written as bounds on the length itself so that nothing is added to it (no overflow in SQL).
    public static func sqlCondition(length: String) -> String {
        let half = day / 2
        return "(" + allCases.map { "\(length) BETWEEN \($0.days.lowerBound * day - half) AND \($0.days.upperBound * day + half - 1)" }
            .joined(separator: " OR ") + ")"
    }

    /// A length `of(milliseconds:)` tells `plan` from again (its shortest), and 0 for none, which it tells no plan from.
    public static func milliseconds(of plan: BillingPeriod?) -> Int64 { plan.map { $0.days.lowerBound * day } ?? 0 }

    /// The calendar lengths of the period, in whole days (months of 28 to 31 days).
    var days: ClosedRange<Int64> {
        switch self {
        case .week: 7...7
        case .month: 28...31
        case .twoMonths: 59...62
        case .threeMonths: 89...92
        case .sixMonths: 181...184
        case .year: 365...366
        }
    }

    /// How many such periods make a month, as a fraction (a week: 52 a year, so 52/12).
    public var perMonth: (numerator: Int64, denominator: Int64) {
        switch self {
        case .week: (52, 12)
        case .month: (1, 1)
        case .twoMonths: (1, 2)
        case .threeMonths: (1, 3)
        case .sixMonths: (1, 6)
        case .year: (1, 12)
        }
    }

    /// A price of this period per month, in the same units, rounded to the nearest unit.
    public func monthly(_ price: Int64) -> Int64 {
        let (numerator, denominator) = perMonth
        return price.clampedMultiplied(by: numerator * 2).clampedAdding(denominator) / (denominator * 2)
    }
}
