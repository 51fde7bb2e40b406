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
        let at = request.uri.queryParameters.get("at")
        guard at == nil || Int64(at!).map({ $0 >= 0 }) == true else {
            return Self.badRequest("at is an instant in epoch milliseconds")
        }
        let instant = at.flatMap { Int64($0) } ?? ReceiptVerifier.currentMilliseconds()
        do {
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

/// The figures as JSON.
enum StatsJSON {
    static let figures = ["subscriptions", "mrr"]

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
