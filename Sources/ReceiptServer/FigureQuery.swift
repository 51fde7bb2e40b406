import Hummingbird
import ReceiptCore

/// The instants and interval a figure is asked for (`?at=&from=&to=&by=`): each instant in
/// epoch milliseconds or as a date (`2026-11-27`, midnight UTC); absent, the defaults.
struct FigureQuery: Sendable {
    let at: Int64
    let from: Int64
    let to: Int64
    let interval: FigureInterval
    /// The first day of every interval that meets [from, to).
    let firstDays: [Int64]
    /// Only this product's figures (`?product=`), when given.
    let product: String?

    /// The most intervals one answer holds (a little under three years by day).
    static let maxIntervals = 1000
    static let why = "at, from and to are epoch milliseconds or dates (2026-11-27), from before to, by day, week or month, "
        + "and at most \(maxIntervals) intervals between from and to; product, when given, is a product id "
        + "(1 to \(maxProductBytes) bytes, no control characters)"
    static let maxProductBytes = 255

    /// Nil when an argument cannot be taken (`why` says what they must be).
    init?(_ query: some Sequence<(key: Substring, value: Substring)>, now: Int64, lookBackDays: Int64, by defaultInterval: FigureInterval) {
        var values: [String: String] = [:]
        for (key, value) in query { values[String(key)] = String(value) }
        func instant(_ name: String, or otherwise: Int64) -> Int64?? {
            guard let text = values[name], !text.isEmpty else { return .some(otherwise) }
            return FigureInterval.instant(text)
        }
        guard let at = instant("at", or: now) ?? nil, let to = instant("to", or: now) ?? nil,
              let from = instant("from", or: to - lookBackDays * FigureInterval.dayMilliseconds) ?? nil,
              let interval = values["by"].map({ FigureInterval(rawValue: $0) }) ?? defaultInterval, from < to,
              let firstDays = interval.intervals(from: from, to: to, limit: Self.maxIntervals) else { return nil }
        let product = values["product"].flatMap { $0.isEmpty ? nil : $0 }
        if let product, product.utf8.count > Self.maxProductBytes || product.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            return nil
        }
        (self.at, self.from, self.to, self.interval, self.firstDays) = (at, from, to, interval, firstDays)
        self.product = product
    }
}
