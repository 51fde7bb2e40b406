import ReceiptCore

/// Each subscription's MRR moves (ReceiptCore's MRRMovement), one row per move: what the counts of
/// MRRMoveDays add up, kept so that a count of the MRR movement lists the subscriptions behind it
/// (SubscriptionList.Counted.moved). Kept by ActiveDays beside the day counts, from the same reading
/// of a subscription's periods and by the same differences (a row whose move a later write took back
/// holds 0 moves, as a day's count does), and filled with them.
enum SubscriptionMoves {
    static let table = "subscription_moves"

    /// A row's key: the subscription, and its move's midnight (days since 1970-01-01 UTC), currency,
    /// kind and product (of what it moved to; for churned, of what it moved from).
    struct Key: SumsKey {
        let subscription: String
        let day: Int64
        let currency: String
        let move: MRRMove
        let product: String

        static func < (a: Self, b: Self) -> Bool {
            (a.subscription, a.day, a.currency, a.move, a.product) < (b.subscription, b.day, b.currency, b.move, b.product)
        }

        /// One move's key (its amount apart: the row's count).
        init(subscription: String, _ move: MRRDayMove) {
            (self.subscription, day, currency, self.move, product) = (subscription, move.day, move.currency, move.move, move.product)
        }

        var values: [StoreValue] { [.text(subscription), .integer(day), .text(currency), .text(move.rawValue), .text(product)] }
    }

    /// Adds `changes` per key to the table's rows, in key order: how many times the subscription made
    /// the move (ActiveDays.Sums' `subscriptions`: 1 made, -1 taken back) and its twelfths (`prices`).
    static func upsert(_ changes: [Key: ActiveDays.Sums], on statements: some StoreStatements) async throws {
        try await ActiveDays.add(changes, into: table, key: ["original_transaction_id", "day", "currency", "move", "product_id"],
                                 counts: ["moves", "twelfths"], on: statements)
    }

    /// How many rows hold other than one move with its amount or none without one, which the writes
    /// never leave (each row is a move made once, or taken back): a list shows such a row once, its
    /// twelfths as they are, whatever its count; `receipt audit` tells each store that holds some.
    static func irregularRows(on statements: some StoreStatements) async throws -> Int64 {
        try await statements.run("SELECT count(*) FROM \(table) WHERE NOT (moves = 1 OR (moves = 0 AND twelfths = 0))", [])
            .first?.first?.integer ?? 0
    }

    /// At most `limit` + 1 moves of `move`'s kind in `currencies` whose midnight is after `afterDay`
    /// and not after `throughDay`, after `cursor` (a move's position: its midnight, then its
    /// subscription's id), in the order of their midnights then original transaction ids (read down
    /// the table's index by kind and day); those a later write took back left out. Each with its
    /// amount a month in milliunits (its twelfths rounded, IntervalMRRMovement.milliunits).
    static func members(_ move: MRRMove, in currencies: SubscriptionList.Currencies, afterDay: Int64, throughDay: Int64,
                        after cursor: SubscriptionList.PeriodPosition?, limit: Int,
                        on statements: some StoreStatements) async throws -> [SubscriptionList.Member] {
        let d = statements.dialect
        var binds: [StoreValue] = [.text(move.rawValue), .integer(afterDay), .integer(throughDay)]
        var conditions = ["move = \(d.placeholder(1))", "day > \(d.placeholder(2))", "day <= \(d.placeholder(3))", "moves <> 0"]
            + StoreFigures.inCurrencies(currencies, column: "currency", binds: &binds, d)
        if let cursor {
            // A position's date is a midnight (Member.position); the day holding it, for any other.
            binds += [.integer(FigureInterval.day(of: cursor.date)), .text(cursor.transactionID)]
            let (day, id) = (d.placeholder(binds.count - 1), d.placeholder(binds.count))
            conditions += ["day >= \(day)", "(day, original_transaction_id) > (\(day), \(id))"]
        }
        let rows = try await statements.run("""
            SELECT original_transaction_id, product_id, day, twelfths, currency FROM \(table)
            WHERE \(conditions.joined(separator: " AND ")) ORDER BY day, original_transaction_id LIMIT \(max(1, limit) + 1)
            """, binds)
        return rows.compactMap { row in
            guard row.count == 5, let id = row[0].text, let product = row[1].text, let day = row[2].integer,
                  let twelfths = row[3].integer, let currency = row[4].text else { return nil }
            return SubscriptionList.Member(originalTransactionID: id, productID: product,
                                           amount: SubscriptionList.Amount(milliunits: IntervalMRRMovement.milliunits(twelfths),
                                                                           currency: currency),
                                           movedAt: day.clampedMultiplied(by: FigureInterval.dayMilliseconds))
        }
    }
}
