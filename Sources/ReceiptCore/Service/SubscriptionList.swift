/// The subscriptions behind one count of the subscriptions figure (`/v1/stats/subscriptions`):
/// those of a product (or all) in a status (or `entitled`) at an instant, as the figure judges
/// them, a page at a time in the order of their original transaction ids; or behind a churned
/// count of the flows (Churn); or the periods behind a count of the flows' periods that began
/// (Began), in the order of their transaction ids. The store reads them; the names, the bounds
/// and the answer are here, for the API and the dashboard alike.
public enum SubscriptionList {
    public static let defaultLimit = 100
    public static let maxLimit = 1000

    /// One subscription: its original transaction id, and the product its status is read under
    /// (the standing period's, else the last purchased; as the figure counts it); in a list of
    /// periods (Began), one period: its own product, and its transaction id and purchase date too.
    public struct Member: Sendable, Equatable {
        public let originalTransactionID: String
        public let productID: String
        public let period: PeriodPosition?

        public init(originalTransactionID: String, productID: String, period: PeriodPosition? = nil) {
            (self.originalTransactionID, self.productID, self.period) = (originalTransactionID, productID, period)
        }

        /// The id it is listed by: the period's, else the subscription's.
        public var listedID: String { period?.transactionID ?? originalTransactionID }

        /// Where it stands in its list, as a cursor names it: the subscription's id, or the period's position.
        public var position: String { period?.text ?? originalTransactionID }
    }

    /// Where a period stands in a list of periods (`PURCHASE-ID`): ordered by purchase date, then
    /// by transaction id, so that the store's index of purchases reads a page without sorting the range.
    public struct PeriodPosition: Sendable, Equatable {
        public let purchaseDate: Int64
        public let transactionID: String

        public init(purchaseDate: Int64, transactionID: String) { (self.purchaseDate, self.transactionID) = (purchaseDate, transactionID) }

        /// As `text` writes it; nil for another text.
        public init?(_ text: String) {
            guard let (purchaseDate, id) = SubscriptionList.numberAndRest(text) else { return nil }
            (self.purchaseDate, transactionID) = (purchaseDate, String(id))
        }

        public var text: String { "\(purchaseDate)-\(transactionID)" }
    }

    /// The periods behind a count of the flows' periods that began (`/v1/stats/flows`' `new`,
    /// `renewals`, …: IntervalFlows.beganNames): those of `name`'s kind bought in [from, to). A
    /// list of periods, not of subscriptions: a subscription can renew twice in a range.
    public struct Began: Sendable, Equatable {
        public let name: String
        public let from: Int64
        public let to: Int64

        /// Nil for a name that is none of IntervalFlows.beganNames.
        public init?(name: String, from: Int64, to: Int64) {
            guard IntervalFlows.beganNames.contains(name) else { return nil }
            (self.name, self.from, self.to) = (name, from, to)
        }

        /// Its place among IntervalFlows.beganNames, the order the store's kinds of period are listed in.
        public var kind: Int { IntervalFlows.beganNames.firstIndex(of: name)! }
    }

    /// The churned of the flows (`/v1/stats/flows`, `/v1/stats/churn`): subscriptions expired at the
    /// instant whose standing period ended in [from, to), for `reason`.
    public struct Churn: Sendable, Equatable {
        public let reason: ChurnReason
        public let from: Int64
        public let to: Int64

        public init(reason: ChurnReason, from: Int64, to: Int64) { (self.reason, self.from, self.to) = (reason, from, to) }
    }

    /// The statuses a count's name (SubscriptionCount.figureNames) stands for; nil for another name.
    public static func statuses(named name: String) -> [SubscriptionState.Status]? {
        if name == SubscriptionCount.entitledName { return SubscriptionCount.entitledStatuses }
        return SubscriptionCount.statuses.first { $0.name == name }.map { [$0] }
    }

    /// Where a page starts (`NOW-ID`): the instant the first page was asked at, which every later
    /// page takes its defaults from (`at`, and a churned list's `to`), so that the pages of a list
    /// are of one list even though now moves between them; and the last original transaction id of
    /// the page before.
    public struct Cursor: Sendable, Equatable {
        public let now: Int64
        public let after: String

        public init(now: Int64, after: String) { (self.now, self.after) = (now, after) }

        /// As `text` writes it: an instant within FigureInterval.instants, then an id of 1 to 64 visible ASCII characters.
        public init?(_ text: String) {
            guard let (now, id) = SubscriptionList.numberAndRest(text), FigureInterval.instants.contains(now), id.utf8.count <= 64,
                  id.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else { return nil }
            (self.now, after) = (now, String(id))
        }

        public var text: String { "\(now)-\(after)" }
    }

    /// `DIGITS-REST`'s number (at most 19 digits, within 64 bits) and its rest (not empty); nil for another text.
    static func numberAndRest(_ text: String) -> (Int64, Substring)? {
        guard let dash = text.utf8.firstIndex(of: UInt8(ascii: "-")) else { return nil }
        let (digits, rest) = (text[..<dash], text[text.utf8.index(after: dash)...])
        guard digits.utf8.count <= 19, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int64(digits),
              !rest.isEmpty else { return nil }
        return (number, rest)
    }

    /// The page of `rows` of a list first asked at `now` (read with one more than `limit`, so that
    /// the one more says whether another page follows) and the cursor of the next page, when one follows.
    public static func page(_ rows: [Member], limit: Int, now: Int64) -> (members: [Member], nextCursor: Cursor?) {
        let kept = Array(rows.prefix(max(1, limit)))
        return (kept, rows.count > kept.count ? kept.last.map { Cursor(now: now, after: $0.position) } : nil)
    }

    /// The answer of `GET /v1/subscriptions`: what was asked (a status and a churn, or the periods
    /// that began), the page's subscriptions (or periods), and `next_cursor` when another page follows.
    /// A list of periods is judged at no instant (`instant` nil).
    public static func json(_ members: [Member], status: String?, at instant: Int64?, product: String?, churn: Churn? = nil,
                            began: Began? = nil, nextCursor: Cursor?) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        if let instant { writer.number("at_ms", instant) }
        if let status { writer.string("status", status) }
        for (key, value, from, to) in [churn.map { ("churned", $0.reason.rawValue, $0.from, $0.to) },
                                       began.map { ("began", $0.name, $0.from, $0.to) }].compactMap({ $0 }) {
            writer.string(key, value)
            writer.number("from_ms", from)
            writer.number("to_ms", to)
        }
        if let product { writer.string("product_id", product) }
        writer.beginArray("subscriptions")
        for member in members {
            writer.beginObject()
            writer.string("original_transaction_id", member.originalTransactionID)
            if let period = member.period { writer.string("transaction_id", period.transactionID) }
            writer.string("product_id", member.productID)
            writer.endObject()
        }
        writer.endArray()
        if let nextCursor { writer.string("next_cursor", nextCursor.text) }
        writer.endObject()
        return writer.bytes
    }
}
