import ReceiptCore

/// Each day's MRR moves (ReceiptCore's MRRMovement: new, expansion, contraction, churned,
/// reactivation), per currency: how many subscriptions moved and by how much, in twelfths of a
/// milliunit a month, on the midnight that first shows it. Kept by ActiveDays from the same
/// reading of a subscription's periods, by the difference each write makes, and filled with it.
enum MRRMoveDays {
    static let table = "subscription_mrr_moves"

    struct Key: Hashable, Comparable {
        let day: Int64
        let currency: String
        let move: MRRMove

        static func < (a: Self, b: Self) -> Bool { (a.day, a.currency, a.move) < (b.day, b.currency, b.move) }
    }

    /// Adds `changes` (subscriptions and twelfths per key) to the table's rows, in key order.
    static func upsert(_ changes: [Key: ActiveDays.Sums], on statements: some StoreStatements) async throws {
        let rows = changes.sorted { $0.key < $1.key }.map { key, sums -> [StoreValue] in
            [.integer(key.day), .text(key.currency), .text(key.move.rawValue), .integer(sums.subscriptions), .integer(sums.prices)]
        }
        try await statements.addRows(rows, into: table, key: ["day", "currency", "move"], counts: ["subscriptions", "twelfths"])
    }

    /// The moves of the midnights after `afterDay` up to `throughDay` (days since 1970-01-01 UTC), by
    /// day; rows whose moves the writes since took back (a refund, a period that arrived late) left out.
    static func totals(afterDay: Int64, throughDay: Int64, on statements: some StoreStatements) async throws -> [MRRDayTotal] {
        let d = statements.dialect
        return try await statements.run("""
            SELECT day, currency, move, subscriptions, twelfths FROM \(table)
            WHERE day > \(d.placeholder(1)) AND day <= \(d.placeholder(2)) AND (subscriptions <> 0 OR twelfths <> 0)
            ORDER BY day, currency, move
            """, [.integer(afterDay), .integer(throughDay)]).compactMap { row in
            guard row.count == 5, let day = row[0].integer, let currency = row[1].text, let move = row[2].text.flatMap(MRRMove.init),
                  let subscriptions = row[3].integer, let twelfths = row[4].integer else { return nil }
            return MRRDayTotal(day: day, currency: currency, move: move, subscriptions: subscriptions, twelfths: twelfths)
        }
    }
}
