/// The rates of one interval, by the auto-renewable periods bought in it (every subscription's
/// periods in order of purchase, refunds known now): each rate a count over another, both given
/// so that a rate can be added up over intervals as its counts, never as its quotients.
///
/// - refund rate: `refunded_paid_periods` (a `revocationDate`, whenever it came) over
///   `paid_periods` (a `price` above 0);
/// - conversion to paying: `new_paying` (a subscription's first paid period: its first period when
///   paid, or its second when that one is paid and follows a free trial) over `new` (first periods);
/// - trial conversion rate: `converted_trials` (free-trial first periods whose subscription's second
///   period is paid, whenever it came) over `trial_starts` (free-trial first periods).
public struct IntervalRates: Sendable, Equatable {
    /// The counts' names, in the order a store's rates query gives them and the answers write them.
    public static let countNames = ["paid_periods", "refunded_paid_periods", "new", "new_paying", "trial_starts",
                                    "converted_trials"]
    /// Each rate's name and its counts' places in `countNames`.
    public static let rates: [(name: String, numerator: Int, denominator: Int)] = [
        ("refund_rate", 1, 0), ("conversion_to_paying", 3, 2), ("trial_conversion_rate", 5, 4),
    ]

    public let startMilliseconds: Int64
    /// By `countNames`.
    public let counts: [Int64]

    /// Each rate by name: its decimal (`ratio`), nil where its denominator counts nothing.
    public var rateFigures: [(name: String, value: String?)] {
        Self.rates.map { ($0.name, Self.ratio(counts[$0.numerator], over: counts[$0.denominator])) }
    }

    /// Every interval of `firstDays` (FigureInterval.intervals), with the counts of `days` (a
    /// day since 1970-01-01 UTC and its counts by `countNames`) it holds.
    public static func make(_ days: [(day: Int64, counts: [Int64])], intervals firstDays: [Int64],
                            by interval: FigureInterval) -> [IntervalRates] {
        let zero = Array(repeating: Int64(0), count: countNames.count)
        var byInterval: [Int64: [Int64]] = [:]
        for (day, counts) in days where counts.count == countNames.count {
            let first = interval.firstDay(holding: day)
            byInterval[first] = zip(byInterval[first] ?? zero, counts).map { $0.clampedAdding($1) }
        }
        return firstDays.map {
            IntervalRates(startMilliseconds: $0 * FigureInterval.dayMilliseconds, counts: byInterval[$0] ?? zero)
        }
    }

    /// A `ratio` as a percentage with two places (`0.0833` is `8.33%`), as a page shows it.
    public static func percent(_ ratio: String) -> String {
        let parts = ratio.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[1].count == 4 else { return ratio }
        let hundredths = String(parts[0] + parts[1].prefix(2)).drop { $0 == "0" }
        return (hundredths.isEmpty ? "0" : String(hundredths)) + "." + parts[1].suffix(2) + "%"
    }

    /// `numerator` / `denominator` in decimal with four places, rounded half up (`0.0833`, `1.2500`):
    /// nil when the denominator is not above 0 or the numerator is below 0. Exact at any size
    /// (the remainder is scaled in 128 bits).
    public static func ratio(_ numerator: Int64, over denominator: Int64) -> String? {
        guard denominator > 0, numerator >= 0 else { return nil }
        let (quotient, remainder) = numerator.quotientAndRemainder(dividingBy: denominator)
        // Five places truncated: the fifth decides the rounding of the fourth.
        var whole = quotient
        var places = (denominator.dividingFullWidth(remainder.multipliedFullWidth(by: 100_000)).quotient + 5) / 10
        // A carry needs a remainder, so a denominator of 2 or more: `whole` is far below Int64.max.
        if places == 10_000 { (whole, places) = (whole + 1, 0) }
        return fourPlaces(UInt64(whole), places)
    }

    /// `whole.places` with the places written as four digits (`0.0833`): how every ratio and
    /// difference of ratios is written.
    static func fourPlaces(_ whole: UInt64, _ places: Int64) -> String {
        let digits = String(places)
        return String(whole) + "." + String(repeating: "0", count: 4 - digits.count) + digits
    }
}
