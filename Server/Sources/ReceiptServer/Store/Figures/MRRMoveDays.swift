import ReceiptCore

/// Each day's MRR moves (ReceiptCore's MRRMovement: new, expansion, contraction, churned,
/// reactivation), per currency: how many subscriptions moved and by how much, in twelfths of a
/// milliunit a month, on the midnight that first shows it. Kept by ActiveDays from the same
/// reading of a subscription's periods, by the difference each write makes, and filled with it.
enum MRRMoveDays {
    static let table = "subscription_mrr_moves"

    struct Key: SumsKey {
        let day: Int64
        let currency: String
        let move: MRRMove

        static func < (a: Self, b: Self) -> Bool { (a.day, a.currency, a.move) < (b.day, b.currency, b.move) }

        var values: [StoreValue] { [.integer(day), .text(currency), .text(move.rawValue)] }
    }

    /// Adds `changes` (subscriptions and twelfths per key) to the table's rows, in key order.
    static func upsert(_ changes: [Key: ActiveDays.Sums], on statements: some StoreStatements) async throws {
        try await ActiveDays.add(changes, into: table, key: ["day", "currency", "move"], counts: ["subscriptions", "twelfths"],
                                 on: statements)
    }

    /// Where the moves are read from: the counts kept per day, or each subscription's moves
    /// (SubscriptionMoves) added up per day as a list of them reads them (a row each where it holds a
    /// move, with its twelfths), which `receipt audit` compares with the JWS' figure.
    enum Source {
        case days, subscriptions

        /// The table, and what a row adds to a day's count of moves and to their twelfths.
        var table: (name: String, count: String, twelfths: String) {
            switch self {
            case .days: return (MRRMoveDays.table, "subscriptions", "twelfths")
            case .subscriptions: return (SubscriptionMoves.table, "CASE WHEN moves <> 0 THEN 1 ELSE 0 END",
                                         "CASE WHEN moves <> 0 THEN twelfths ELSE 0 END")
            }
        }
    }

    /// The moves of the midnights after `afterDay` up to `throughDay` (days since 1970-01-01 UTC), by
    /// day; rows whose moves the writes since took back (a refund, a period that arrived late) left out.
    static func totals(afterDay: Int64, throughDay: Int64, from source: Source = .days,
                       on statements: some StoreStatements) async throws -> [MRRDayTotal] {
        let d = statements.dialect
        let (name, count, twelfths) = source.table
        return try await statements.run("""
            SELECT day, currency, move, CAST(sum(\(count)) AS BIGINT), CAST(sum(\(twelfths)) AS BIGINT) FROM \(name)
            WHERE day > \(d.placeholder(1)) AND day <= \(d.placeholder(2)) GROUP BY day, currency, move
            HAVING sum(\(count)) <> 0 OR sum(\(twelfths)) <> 0 ORDER BY day, currency, move
            """, [.integer(afterDay), .integer(throughDay)]).compactMap { row in
            guard row.count == 5, let day = row[0].integer, let currency = row[1].text, let move = row[2].text.flatMap(MRRMove.init),
                  let subscriptions = row[3].integer, let twelfths = row[4].integer else { return nil }
            return MRRDayTotal(day: day, currency: currency, move: move, subscriptions: subscriptions, twelfths: twelfths)
        }
    }
}
