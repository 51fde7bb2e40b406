import HTTPTypes
import Hummingbird
import ReceiptCore

/// Figures from the store's rows, for a caller with a read token (or where reads are
/// open), at an instant (`?at=MS`, now by default): `GET /v1/stats/subscriptions`, the
/// auto-renewable subscriptions by product and by Apple's status, as SubscriptionState
/// judges one subscription; `GET /v1/stats/mrr`, the monthly recurring revenue of the
/// active ones per currency (StoreFigures).
extension ReceiptResponder {
    static let statsPrefix = "/v1/stats/"

    func stats(_ name: String, _ request: Request, context: Context) async throws -> (Response, String) {
        guard request.method == .get else { return (Self.methodNotAllowed(allow: "GET"), "405") }
        guard let stored else { return Self.noStore() }
        guard reads.caller(of: request.headers) != .refused else { return Self.unauthorized() }
        guard StatsJSON.figures.contains(name) else {
            return (Self.json(.notFound, NotificationEndpoint.failure(
                "NOT_FOUND", "no figure \(name); there are " + StatsJSON.figures.joined(separator: " and "))), "404")
        }
        let query = request.uri.queryParameters
        let now = ReceiptVerifier.currentMilliseconds()
        guard let instant = Self.instant(query.get("at"), or: now), let to = Self.instant(query.get("to"), or: now),
              let from = Self.instant(query.get("from"), or: to - 30 * FigureInterval.dayMilliseconds) else {
            return Self.badRequest("at, from and to are instants in epoch milliseconds")
        }
        do {
            if name == "flows" {
                guard let interval = FigureInterval(rawValue: query.get("by") ?? "day"), from < to,
                      let firstDays = interval.intervals(from: from, to: to, limit: StatsJSON.maxIntervals) else {
                    return Self.badRequest("flows take from < to, by day, week or month, and at most \(StatsJSON.maxIntervals) "
                                           + "intervals between them")
                }
                let days = try await stored.store.flows(from: from, to: to, at: instant)
                return (Self.json(.ok, StatsJSON.flows(days, intervals: firstDays, by: interval, from: from, to: to, at: instant)),
                        "200")
            }
            if name == "mrr" {
                return (Self.json(.ok, StatsJSON.mrr(try await stored.store.activePrices(at: instant), at: instant)), "200")
            }
            let counts = try await stored.store.activeSubscriptions(at: instant)
            return (Self.json(.ok, StatsJSON.subscriptions(counts, at: instant)), "200")
        } catch {
            return Self.storeUnavailable(error, context)
        }
    }
}

extension ReceiptResponder {
    /// A query's instant: absent, `otherwise`; nil when it is not a number of milliseconds from 0.
    fileprivate static func instant(_ text: String?, or otherwise: Int64) -> Int64? {
        guard let text else { return otherwise }
        return Int64(text).flatMap { $0 >= 0 ? $0 : nil }
    }
}

/// The figures as JSON.
enum StatsJSON {
    static let figures = ["subscriptions", "mrr", "flows"]
    /// The most intervals one flows answer holds (a little under three years by day).
    static let maxIntervals = 1000

    /// `{"from_ms", "to_ms", "by", "at_ms", "intervals": [{"start_ms", "new", "trial_starts",
    /// "renewals", "trial_conversions", "recoveries", "reactivations", "refunds": {"count",
    /// "amounts": [{"currency", "milliunits"}]}, "churned": {"voluntary", "billing", "other"}}]}`:
    /// every interval that meets [from, to), zeros where nothing happened.
    static func flows(_ days: [DayFlows], intervals firstDays: [Int64], by interval: FigureInterval, from: Int64, to: Int64,
                      at instant: Int64) -> [UInt8] {
        var byInterval: [Int64: [DayFlows]] = [:]
        for day in days { byInterval[interval.firstDay(holding: day.day), default: []].append(day) }
        var writer = JSONWriter()
        writer.beginObject()
        writer.number("from_ms", from)
        writer.number("to_ms", to)
        writer.string("by", interval.rawValue)
        writer.number("at_ms", instant)
        writer.beginArray("intervals")
        for first in firstDays {
            let days = byInterval[first] ?? []
            func total(_ value: (DayFlows) -> Int64) -> Int64 { days.reduce(0) { $0 + value($1) } }
            writer.beginObject()
            writer.number("start_ms", first * FigureInterval.dayMilliseconds)
            writer.number("new", total(\.began.new))
            writer.number("trial_starts", total(\.began.trialStarts))
            writer.number("renewals", total(\.began.renewals))
            writer.number("trial_conversions", total(\.began.trialConversions))
            writer.number("recoveries", total(\.began.recoveries))
            writer.number("reactivations", total(\.began.reactivations))
            let refunds = days.flatMap(\.refunds)
            writer.beginObject("refunds")
            writer.number("count", refunds.reduce(0) { $0 + $1.count })
            writer.beginArray("amounts")
            for currency in Set(refunds.map(\.currency)).sorted() {
                writer.beginObject()
                writer.string("currency", currency)
                writer.number("milliunits", refunds.filter { $0.currency == currency }.reduce(0) { $0 + $1.amount })
                writer.endObject()
            }
            writer.endArray()
            writer.endObject()
            // Apple's expirationIntent: 1 the customer cancelled, 2 a billing error; the rest other.
            let churned = days.flatMap(\.churned)
            writer.beginObject("churned")
            writer.number("voluntary", churned.filter { $0.intent == 1 }.reduce(0) { $0 + $1.count })
            writer.number("billing", churned.filter { $0.intent == 2 }.reduce(0) { $0 + $1.count })
            writer.number("other", churned.filter { $0.intent != 1 && $0.intent != 2 }.reduce(0) { $0 + $1.count })
            writer.endObject()
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        return writer.bytes
    }

    static let statuses: [SubscriptionState.Status] = [.active, .gracePeriod, .billingRetry, .expired, .revoked]

    /// `{"at_ms", "total": {status name: count…, "entitled"}, "by_product": [{"product_id", …}]}`:
    /// every status named, 0 where none; `entitled` is active plus grace period.
    static func subscriptions(_ counts: [SubscriptionCount], at instant: Int64) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.number("at_ms", instant)
        writer.beginObject("total")
        write(counts, into: &writer)
        writer.endObject()
        writer.beginArray("by_product")
        for product in Set(counts.map(\.productID)).sorted() {
            writer.beginObject()
            writer.string("product_id", product)
            write(counts.filter { $0.productID == product }, into: &writer)
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        return writer.bytes
    }

    /// `{"at_ms", "currencies": [{"currency", "mrr_milliunits", "subscriptions", "by_period": {period: count}}],
    /// "unclassified": {"subscriptions", "currencies": [...]}}`: the monthly recurring revenue of the
    /// subscriptions active at the instant, per currency (never converted), in milliunits: for each
    /// billing period (BillingPeriod, from the standing period's dates), its prices added, then made
    /// monthly and rounded. Periods of no plan's length (Sandbox's minutes) are counted apart.
    static func mrr(_ groups: [PriceGroup], at instant: Int64) -> [UInt8] {
        var sums: [String: [BillingPeriod: (subscriptions: Int64, prices: Int64)]] = [:]
        var unclassified: (subscriptions: Int64, currencies: Set<String>) = (0, [])
        for group in groups {
            guard let period = BillingPeriod.of(milliseconds: group.periodMilliseconds) else {
                unclassified.subscriptions += group.subscriptions
                unclassified.currencies.insert(group.currency)
                continue
            }
            let earlier = sums[group.currency, default: [:]][period] ?? (0, 0)
            sums[group.currency, default: [:]][period] = (earlier.subscriptions + group.subscriptions, earlier.prices + group.priceSum)
        }
        var writer = JSONWriter()
        writer.beginObject()
        writer.number("at_ms", instant)
        writer.beginArray("currencies")
        for (currency, periods) in sums.sorted(by: { $0.key < $1.key }) {
            writer.beginObject()
            writer.string("currency", currency)
            writer.number("mrr_milliunits", periods.reduce(0) { $0 + $1.key.monthly($1.value.prices) })
            writer.number("subscriptions", periods.values.reduce(0) { $0 + $1.subscriptions })
            writer.beginObject("by_period")
            for period in BillingPeriod.allCases { if let sum = periods[period] { writer.number(period.rawValue, sum.subscriptions) } }
            writer.endObject()
            writer.endObject()
        }
        writer.endArray()
        writer.beginObject("unclassified")
        writer.number("subscriptions", unclassified.subscriptions)
        writer.beginArray("currencies")
        for currency in unclassified.currencies.sorted() { writer.string(nil, currency) }
        writer.endArray()
        writer.endObject()
        writer.endObject()
        return writer.bytes
    }

    private static func write(_ counts: [SubscriptionCount], into writer: inout JSONWriter) {
        func total(_ status: SubscriptionState.Status) -> Int64 { counts.filter { $0.status == status }.reduce(0) { $0 + $1.count } }
        for status in statuses { writer.number(status.name, total(status)) }
        writer.number("entitled", total(.active) + total(.gracePeriod))
    }
}
