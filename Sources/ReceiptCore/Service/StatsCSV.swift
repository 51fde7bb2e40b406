/// The store's figures as CSV (RFC 4180: comma-separated, CRLF line ends, a header row, a field
/// quoted when it holds a comma, a quote or a line break), `GET /v1/stats/…?format=csv`: the
/// same numbers as StatsJSON's answer, a row per product, currency or interval, named as there.
public enum StatsCSV {
    /// `product_id,active,grace_period,billing_retry,expired,revoked,entitled`: a row per
    /// product, then the total with an empty product id.
    public static func subscriptions(_ counts: [SubscriptionCount]) -> [UInt8] {
        var table = Table(["product_id"] + SubscriptionCount.figureNames)
        for product in Set(counts.map(\.productID)).sorted() {
            table.row([product], SubscriptionCount.figures(counts.filter { $0.productID == product }))
        }
        table.row([""], SubscriptionCount.figures(counts))
        return table.bytes
    }

    /// `currency,mrr_milliunits,subscriptions`, then a column per billing period: a row per
    /// currency (MRRLine). Subscriptions of no plan's length bring no revenue and have no row.
    public static func mrr(_ groups: [PriceGroup]) -> [UInt8] {
        var table = Table(["currency", "mrr_milliunits", "subscriptions"] + BillingPeriod.allCases.map(\.rawValue))
        for line in MRRLine.lines(groups).lines {
            let byPeriod = BillingPeriod.allCases.map { period in line.periods.first { $0.period == period }?.subscriptions ?? 0 }
            table.row([line.currency], [line.milliunits, line.subscriptions] + byPeriod)
        }
        return table.bytes
    }

    /// `start_ms,start_date`, the periods that began by kind, `refunds`, and `churned_` by
    /// reason: a row per interval (the refunded amounts per currency are the revenue's).
    public static func flows(_ intervals: [IntervalFlows]) -> [UInt8] {
        var table = Table(["start_ms", "start_date"] + IntervalFlows.beganNames + ["refunds"]
                          + IntervalFlows.churnedNames.map { "churned_" + $0 })
        for flows in intervals {
            table.row([String(flows.startMilliseconds), FigureInterval.date(of: flows.startMilliseconds)],
                      flows.beganFigures.map(\.value) + [flows.refundCount] + flows.churnedFigures.map(\.value))
        }
        return table.bytes
    }

    /// `start_ms,start_date,currency,gross_milliunits,refunded_milliunits,net_milliunits,periods,refunds`:
    /// a row per interval and currency something happened in (IntervalRevenue).
    public static func revenue(_ intervals: [IntervalRevenue]) -> [UInt8] {
        var table = Table(["start_ms", "start_date", "currency"] + IntervalRevenue.Line.figureNames)
        for interval in intervals {
            for line in interval.currencies {
                table.row([String(interval.startMilliseconds), FigureInterval.date(of: interval.startMilliseconds), line.currency],
                          line.figures)
            }
        }
        return table.bytes
    }

    /// `start_ms,start_date`, the counts (IntervalRates.countNames), then the rates, each
    /// empty where its denominator counts nothing: a row per interval.
    public static func rates(_ intervals: [IntervalRates]) -> [UInt8] {
        countsAndRates(IntervalRates.countNames, IntervalRates.rates.map(\.name),
                       intervals.map { ($0.startMilliseconds, $0.counts, $0.rateFigures) })
    }

    /// `start_ms,start_date`, IntervalChurn's counts, then its rates (empty where nothing was active at the start).
    public static func churn(_ intervals: [IntervalChurn]) -> [UInt8] {
        countsAndRates(IntervalChurn.countNames, IntervalChurn.rates.map(\.name),
                       intervals.map { ($0.startMilliseconds, $0.counts, $0.rateFigures) })
    }

    /// `start_ms,start_date,at_ms,at_date,active,active_trials,active_paid,unclassified,currency,mrr_milliunits,arr_milliunits,subscriptions`:
    /// a row per interval and currency (IntervalActive), the interval's counts on each; an interval
    /// without a currency has one row, its currency's fields empty.
    public static func active(_ intervals: [IntervalActive]) -> [UInt8] {
        var table = Table(["start_ms", "start_date", "at_ms", "at_date"] + IntervalActive.countNames
                          + ["unclassified", "currency", "mrr_milliunits", "arr_milliunits", "subscriptions"])
        for interval in intervals {
            let lines = interval.mrr.map { [$0.currency, String($0.milliunits), String(IntervalActive.arr($0)), String($0.subscriptions)] }
            for line in lines.isEmpty ? [["", "", "", ""]] : lines {
                table.row([String(interval.startMilliseconds), FigureInterval.date(of: interval.startMilliseconds),
                           String(interval.atMilliseconds), FigureInterval.date(of: interval.atMilliseconds)],
                          interval.counts + [interval.unclassified], then: line)
            }
        }
        return table.bytes
    }

    /// `start_ms,start_date,at_ms,at_date,currency`, each move's milliunits and `net_milliunits`, then
    /// each move's count: a row per interval and currency that moved (IntervalMRRMovement); an
    /// interval without a move has no row.
    public static func mrrMovement(_ intervals: [IntervalMRRMovement]) -> [UInt8] {
        var table = Table(["start_ms", "start_date", "at_ms", "at_date", "currency"] + IntervalMRRMovement.amountNames
                          + IntervalMRRMovement.countNames)
        for interval in intervals {
            for line in interval.currencies {
                table.row([String(interval.startMilliseconds), FigureInterval.date(of: interval.startMilliseconds),
                           String(interval.atMilliseconds), FigureInterval.date(of: interval.atMilliseconds), line.currency],
                          line.amounts.map(\.milliunits) + line.counts)
            }
        }
        return table.bytes
    }

    /// A row per interval: its start, its counts, then its rates (empty without a denominator).
    private static func countsAndRates(_ countNames: [String], _ rateNames: [String],
                                       _ intervals: [(start: Int64, counts: [Int64], rates: [(name: String, value: String?)])])
        -> [UInt8] {
        var table = Table(["start_ms", "start_date"] + countNames + rateNames)
        for interval in intervals {
            table.row([String(interval.start), FigureInterval.date(of: interval.start)], interval.counts,
                      then: interval.rates.map { $0.value ?? "" })
        }
        return table.bytes
    }

    /// `start_ms,start_date,subscriptions`, `retained_N` and `retention_N` for each period followed
    /// (a share empty without a subscription), then `currency,paying,net_milliunits,per_paying_milliunits`:
    /// a row per interval and currency (IntervalCohort), the cohort's columns on each; an interval
    /// without a currency has one row, its currency's fields empty.
    public static func cohorts(_ intervals: [IntervalCohort], periods: Int) -> [UInt8] {
        let after = (1...IntervalCohort.followed(periods)).map(String.init)
        var table = Table(["start_ms", "start_date", "subscriptions"] + after.map { "retained_" + $0 }
                          + after.map { "retention_" + $0 } + ["currency", "paying", "net_milliunits", "per_paying_milliunits"])
        for cohort in intervals {
            let shares = cohort.retention.map { $0 ?? "" }
            let lines = cohort.currencies.map { [$0.currency, String($0.paying), String($0.net), $0.perPaying.map(String.init) ?? ""] }
            for line in lines.isEmpty ? [["", "", "", ""]] : lines {
                table.row([String(cohort.startMilliseconds), FigureInterval.date(of: cohort.startMilliseconds)],
                          [cohort.subscriptions] + cohort.retained, then: shares + line)
            }
        }
        return table.bytes
    }

    /// Rows of text fields, numbers, then text fields again, written as they come.
    struct Table {
        private(set) var bytes: [UInt8] = []

        init(_ header: [String]) { line(header) }

        mutating func row(_ texts: [String], _ numbers: [Int64], then trailing: [String] = []) {
            line(texts + numbers.map { String($0) } + trailing)
        }

        private mutating func line(_ fields: [String]) {
            for (index, field) in fields.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                let quoted = field.utf8.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D }
                guard quoted else { bytes += field.utf8; continue }
                bytes.append(UInt8(ascii: "\""))
                for byte in field.utf8 {
                    if byte == UInt8(ascii: "\"") { bytes.append(byte) }
                    bytes.append(byte)
                }
                bytes.append(UInt8(ascii: "\""))
            }
            bytes += [0x0D, 0x0A]
        }
    }
}
