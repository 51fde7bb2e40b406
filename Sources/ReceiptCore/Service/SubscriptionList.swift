/// The subscriptions behind one count of the subscriptions figure (`/v1/stats/subscriptions`):
/// those of a product (or all) in a status (or `entitled`) at an instant, as the figure judges
/// them, a page at a time in the order of their original transaction ids. The store reads
/// them; the names, the bounds and the answer are here, for the API and the dashboard alike.
public enum SubscriptionList {
    public static let defaultLimit = 100
    public static let maxLimit = 1000

    /// One subscription: its original transaction id, and the product its status is read under
    /// (the standing period's, else the last purchased; as the figure counts it).
    public struct Member: Sendable, Equatable {
        public let originalTransactionID: String
        public let productID: String

        public init(originalTransactionID: String, productID: String) {
            (self.originalTransactionID, self.productID) = (originalTransactionID, productID)
        }
    }

    /// The statuses a count's name (SubscriptionCount.figureNames) stands for; nil for another name.
    public static func statuses(named name: String) -> [SubscriptionState.Status]? {
        if name == SubscriptionCount.entitledName { return SubscriptionCount.entitledStatuses }
        return SubscriptionCount.statuses.first { $0.name == name }.map { [$0] }
    }

    /// A cursor as `nextCursor` gives it: an original transaction id, 1 to 64 visible ASCII characters.
    public static func takes(cursor: String) -> Bool {
        (1...64).contains(cursor.utf8.count) && cursor.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }

    /// The page of `rows` (read with one more than `limit`, so that the one more says whether
    /// another page follows) and the cursor of the next page, when one follows.
    public static func page(_ rows: [Member], limit: Int) -> (members: [Member], nextCursor: String?) {
        let kept = Array(rows.prefix(max(1, limit)))
        return (kept, rows.count > kept.count ? kept.last?.originalTransactionID : nil)
    }

    /// The answer of `GET /v1/subscriptions`: what was asked, the page's subscriptions, each with
    /// the path of its state, and `next_cursor` when another page follows.
    public static func json(_ members: [Member], status: String, at instant: Int64, product: String?,
                            nextCursor: String?) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.number("at_ms", instant)
        writer.string("status", status)
        if let product { writer.string("product_id", product) }
        writer.beginArray("subscriptions")
        for member in members {
            writer.beginObject()
            writer.string("original_transaction_id", member.originalTransactionID)
            writer.string("product_id", member.productID)
            writer.endObject()
        }
        writer.endArray()
        if let nextCursor { writer.string("next_cursor", nextCursor) }
        writer.endObject()
        return writer.bytes
    }
}
