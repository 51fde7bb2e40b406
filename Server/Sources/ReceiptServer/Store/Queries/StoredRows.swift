import ReceiptCore

/// What a store holds of some subscriptions, as the JWS it keeps, each kind in the order
/// it was signed.
struct StoredSubscriptions: Sendable {
    var transactions: [String] = []
    var renewalInfos: [String] = []

    /// One row of `StoreSchema.subscriptionsQuery`.
    struct Row {
        let isTransaction: Bool
        let signedDate: Int64
        let jws: String

        /// The query's columns: `kind` 0 for a transaction, 1 for a renewal info.
        init(kind: Int64, signedDate: Int64, jws: String) {
            isTransaction = kind == 0
            self.signedDate = signedDate
            self.jws = jws
        }
    }

    init() {}

    /// The rows of `StoreSchema.subscriptionsQuery`, put in signing order here (rows signed
    /// at the same instant in any order, as SQL's would be): the query leaves them unordered
    /// because SQLite orders a result by copying every row, JWS and all, into a temporary
    /// tree, and then copies each JWS out of it again.
    init(rows: [Row]) {
        for row in rows.sorted(by: { $0.signedDate < $1.signedDate }) {
            if row.isTransaction { transactions.append(row.jws) } else { renewalInfos.append(row.jws) }
        }
    }
}

/// Where a page of an account's transactions ends: the last row's signing date and
/// transaction id (rows come most recently signed first). As text: `SIGNEDDATE-ID`.
public struct StoreCursor: Sendable, Equatable {
    let signedDate: Int64
    let transactionID: String

    public init?(_ text: String) {
        let parts = text.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let date = Int64(parts[0]), !parts[1].isEmpty, parts[1].utf8.count <= 64,
              parts[1].utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else { return nil }
        signedDate = date
        transactionID = String(parts[1])
    }

    init(signedDate: Int64, transactionID: String) {
        self.signedDate = signedDate
        self.transactionID = transactionID
    }

    public var text: String { "\(signedDate)-\(transactionID)" }
}

/// One page of an account's transactions.
struct StoredPage: Sendable {
    var transactions: [String] = []
    var next: StoreCursor?

    /// The page of `rows` (signed date, transaction id, JWS), read with one more than
    /// `limit` so that the one more says whether another page follows.
    static func of(_ rows: [(Int64, String, String)], limit: Int) -> StoredPage {
        let kept = rows.prefix(max(1, limit))
        return StoredPage(transactions: kept.map(\.2),
                          next: rows.count > kept.count ? kept.last.map { StoreCursor(signedDate: $0.0, transactionID: $0.1) } : nil)
    }
}
