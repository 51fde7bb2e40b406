/// Money of auto-renewable subscriptions that moved on one day (since 1970-01-01 UTC) in one
/// currency, as a store's revenue query gives it: the periods that began that day and their
/// prices, the periods refunded or revoked that day and the amount refunded (milliunits).
public struct DayRevenue: Sendable {
    public let day: Int64
    public let currency: String
    /// The periods that began, and their prices added up.
    public var began: (periods: Int64, amount: Int64) = (0, 0)
    /// The periods refunded or revoked, and the amounts refunded added up.
    public var refunded: (periods: Int64, amount: Int64) = (0, 0)

    public init(day: Int64, currency: String) { (self.day, self.currency) = (day, currency) }
}

/// The revenue of one interval, per currency (never converted): gross (the prices of the
/// periods that began in it), refunded (the amounts refunded in it, whenever their periods
/// began) and net, their difference (below zero when refunds outweigh what began).
public struct IntervalRevenue: Sendable, Equatable {
    public struct Line: Sendable, Equatable {
        public let currency: String
        public let periods, gross, refunds, refunded: Int64

        /// The names the answers give a line's numbers, in order.
        public static let figureNames = ["gross_milliunits", "refunded_milliunits", "net_milliunits", "periods", "refunds"]
        /// The line's numbers by figureNames' order.
        public var figures: [Int64] { [gross, refunded, net, periods, refunds] }

        /// The money of `days` added up per currency, by currency code.
        public static func sums(_ days: [DayRevenue]) -> [Line] {
            var lines: [String: Line] = [:]
            for day in days {
                let held = lines[day.currency] ?? Line(currency: day.currency, periods: 0, gross: 0, refunds: 0, refunded: 0)
                lines[day.currency] = Line(
                    currency: day.currency, periods: held.periods.clampedAdding(day.began.periods),
                    gross: held.gross.clampedAdding(day.began.amount), refunds: held.refunds.clampedAdding(day.refunded.periods),
                    refunded: held.refunded.clampedAdding(day.refunded.amount))
            }
            return lines.values.sorted { $0.currency < $1.currency }
        }

        /// gross − refunded, held at Int64's bounds as every sum of signed prices is.
        public var net: Int64 {
            let (difference, overflow) = gross.subtractingReportingOverflow(refunded)
            return overflow ? (refunded > 0 ? .min : .max) : difference
        }
    }

    public let startMilliseconds: Int64
    /// The currencies something happened in, by currency code.
    public let currencies: [Line]

    /// Every interval of `firstDays` (FigureInterval.intervals), with the days of `days` it holds.
    public static func make(_ days: [DayRevenue], intervals firstDays: [Int64], by interval: FigureInterval) -> [IntervalRevenue] {
        var byInterval: [Int64: [DayRevenue]] = [:]
        for day in days { byInterval[interval.firstDay(holding: day.day), default: []].append(day) }
        return firstDays.map { first in
            IntervalRevenue(startMilliseconds: first * FigureInterval.dayMilliseconds, currencies: Line.sums(byInterval[first] ?? []))
        }
    }
}
