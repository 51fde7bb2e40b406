import HTTPTypes
import Hummingbird
import ReceiptCore

/// Figures from the store's rows, for a caller with a read token (or where reads are
/// open): `GET /v1/stats/subscriptions[?at=MS]`, the auto-renewable subscriptions by
/// product and by Apple's status at an instant (now by default), as SubscriptionState
/// judges one subscription (StoreFigures).
extension ReceiptResponder {
    static let statsPrefix = "/v1/stats/"

    func stats(_ name: String, _ request: Request, context: Context) async throws -> (Response, String) {
        guard request.method == .get else { return (Self.methodNotAllowed(allow: "GET"), "405") }
        guard let stored else { return Self.noStore() }
        guard reads.caller(of: request.headers) != .refused else { return Self.unauthorized() }
        guard name == "subscriptions" else {
            return (Self.json(.notFound, NotificationEndpoint.failure("NOT_FOUND", "no figure \(name); there is subscriptions")), "404")
        }
        let at = request.uri.queryParameters.get("at")
        guard at == nil || Int64(at!).map({ $0 >= 0 }) == true else {
            return Self.badRequest("at is an instant in epoch milliseconds")
        }
        let instant = at.flatMap { Int64($0) } ?? ReceiptVerifier.currentMilliseconds()
        do {
            let counts = try await stored.store.activeSubscriptions(at: instant)
            return (Self.json(.ok, StatsJSON.subscriptions(counts, at: instant)), "200")
        } catch {
            return Self.storeUnavailable(error, context)
        }
    }
}

/// The figures as JSON.
enum StatsJSON {
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

    private static func write(_ counts: [SubscriptionCount], into writer: inout JSONWriter) {
        func total(_ status: SubscriptionState.Status) -> Int64 { counts.filter { $0.status == status }.reduce(0) { $0 + $1.count } }
        for status in statuses { writer.number(status.name, total(status)) }
        writer.number("entitled", total(.active) + total(.gracePeriod))
    }
}
