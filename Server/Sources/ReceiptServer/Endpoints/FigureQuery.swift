import Hummingbird
import ReceiptCore

/// The instants and interval a figure is asked for (`?at=&from=&to=&by=&product=`): each
/// instant in epoch milliseconds or as a date (`2026-11-27`, midnight UTC), within
/// FigureInterval.instants; absent or empty, the defaults.
struct FigureQuery: Sendable {
    let at: Int64
    /// Whether `at` was asked for (else it is now, which links from a page leave to the page they lead to).
    let atGiven: Bool
    let from: Int64
    let to: Int64
    let interval: FigureInterval
    /// The first day of every interval that meets [from, to).
    let firstDays: [Int64]
    /// The day each interval is read at, for the figures of what stood at its end (IntervalActive.readDays).
    var readDays: [Int64] { IntervalActive.readDays(intervals: firstDays, by: interval, to: to) }
    /// Only this product's figures (`?product=`), when given.
    let product: String?
    /// The answer as JSON (the default) or CSV (`?format=csv`).
    let format: Format
    /// How many periods a figure followed over periods (the cohorts) follows (`?periods=`).
    let periods: Int

    enum Format: String, Sendable { case json, csv }

    /// The most intervals one answer holds (a little under three years by day).
    static let maxIntervals = 1000
    static let maxProductBytes = 255

    /// An argument that cannot be taken, named, with what it must be.
    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    /// Whether a figure can be asked for `product`: 1 to maxProductBytes bytes, no control characters.
    static func takes(product: String) -> Bool {
        !product.isEmpty && product.utf8.count <= maxProductBytes
            && !product.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
    }

    /// The parameters only a figure over a range reads.
    static let rangeParameters = ["from", "to", "by"]

    /// The route's entry (ServerRoute.figureQuery) refused unknown and repeated parameters already.
    /// `ranged` false: a figure judged at one instant, which refuses a range rather than ignore it;
    /// `judged` false: a figure no instant judges (revenue), which refuses `at` likewise;
    /// `followed` false: a figure not followed over periods, which refuses `periods` likewise;
    /// `perProduct` false: a figure over all products (MRR movement), which refuses `product` likewise.
    init(_ query: some Sequence<(key: Substring, value: Substring)>, now: Int64, lookBackDays: Int64,
         by defaultInterval: FigureInterval, ranged: Bool = true, judged: Bool = true, followed: Bool = false,
         perProduct: Bool = true) throws(Refusal) {
        var values: [String: String] = [:]
        for (key, value) in query where !value.isEmpty { values[String(key)] = String(value) }
        if !judged, values["at"] != nil {
            throw Refusal(description: "at is for a figure judged at an instant; this one counts what happened in each "
                                       + "interval (active: what stood at its end): it takes from, to, by, product and format "
                                       + "(cohorts: periods too)")
        }
        if !ranged, let given = Self.rangeParameters.first(where: { values[$0] != nil }) {
            throw Refusal(description: "\(given) is for a figure over a range (flows, revenue, rates, cohorts, churn, active, mrr_movement); this one is judged at one instant: "
                                       + "it takes at and product")
        }
        func instant(_ name: String, or otherwise: Int64) throws(Refusal) -> Int64 {
            guard let text = values[name] else { return otherwise }
            guard let instant = FigureInterval.instant(text) else {
                throw Refusal(description: "\(name) is \(FigureInterval.instantsText)")
            }
            return instant
        }
        let at = try instant("at", or: now)
        let to = try instant("to", or: now)
        // `to` is within FigureInterval.instants: a year's days back cannot overflow.
        let from = try instant("from", or: to - lookBackDays * FigureInterval.dayMilliseconds)
        guard from < to else { throw Refusal(description: "from must be before to") }
        let interval = try values["by"].map { (text) throws(Refusal) in
            guard let interval = FigureInterval(rawValue: text) else { throw Refusal(description: "by is day, week or month") }
            return interval
        } ?? defaultInterval
        guard let firstDays = interval.intervals(from: from, to: to, limit: Self.maxIntervals) else {
            throw Refusal(description: "from and to hold more than \(Self.maxIntervals) intervals by \(interval.rawValue)")
        }
        let product = values["product"]
        if !perProduct, product != nil {
            throw Refusal(description: "product is for a figure per product; this one is over all of them (an upgrade moves "
                                       + "MRR from one product to another)")
        }
        if let product, !Self.takes(product: product) {
            throw Refusal(description: "product is a product id (1 to \(Self.maxProductBytes) bytes, no control characters)")
        }
        guard let format = Format(rawValue: values["format"] ?? Format.json.rawValue) else {
            throw Refusal(description: "format is json or csv")
        }
        if !followed, values["periods"] != nil {
            throw Refusal(description: "periods is for a figure followed over periods (cohorts)")
        }
        let periods = try values["periods"].map { (text) throws(Refusal) in
            guard let periods = IntervalCohort.periods(named: text) else {
                throw Refusal(description: "periods is a whole number from 1 to \(IntervalCohort.maxPeriods)")
            }
            return periods
        } ?? IntervalCohort.defaultPeriods
        (self.at, self.from, self.to, self.interval, self.firstDays, self.product) = (at, from, to, interval, firstDays, product)
        atGiven = values["at"] != nil
        (self.format, self.periods) = (format, periods)
    }
}
