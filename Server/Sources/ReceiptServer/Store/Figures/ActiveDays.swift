import ReceiptCore

/// The subscriptions active at each midnight (UTC), per product, kept as changes per day
/// (ActiveSpans: a subscription's span of activity adds one on the first midnight it covers and
/// takes it back on the first midnight after it), so that the number active at any midnight is a
/// sum over the days before it: the churn rate's denominator, read for each interval's start
/// without reading the subscriptions as they stood then.
///
/// Kept like FlowDays: a write can change the spans only from the earliest purchase it writes
/// (PeriodChanges; the periods bought before it stand as they did), so it reads, before and
/// after, the periods that can stand at a midnight from then on (those not revoked that end after
/// it) and adds the difference of their day changes, one row at a time in key order. A store that
/// held rows before this table is filled by the same computation, a page of subscriptions at a time.
///
/// Where it may differ from the rows read as of an instant (SubscriptionSummaries.asExpression): a
/// standing period without a product id counts under '' (the rows fall back to the last purchase's
/// product), and periods equal in end and purchase are told apart by their ids in Swift's order
/// (PostgreSQL's by its collation). Apple's payloads always name the product, and no two periods
/// of one subscription share both dates.
enum ActiveDays {
    static let table = "subscription_active_days"

    typealias Changes = [Key: Int64]

    struct Key: Hashable, Comparable {
        let day: Int64
        let product: String
        static func < (a: Self, b: Self) -> Bool { (a.day, a.product) < (b.day, b.product) }
    }

    /// The rows that can stand at a midnight: auto-renewable, not revoked, with an end.
    private static let periodRows = "product_type = 'Auto-Renewable Subscription' AND revocation_date IS NULL "
        + "AND expires_date IS NOT NULL"
    private static let periodColumns = "transaction_id, coalesce(product_id, ''), purchase_date, expires_date"

    /// The periods of one subscription (placeholder 1) that end after an instant (placeholder 2):
    /// those that can stand at a midnight from then on, read down the index of its ends.
    private static func periodsQuery(_ d: StoreDialect) -> String {
        "SELECT \(periodColumns) FROM transactions WHERE original_transaction_id = \(d.placeholder(1)) AND \(periodRows) "
            + "AND expires_date > \(d.placeholder(2))"
    }

    private static func period(_ row: some Collection<StoreValue>) -> ActiveSpans.Period? {
        let row = Array(row)
        guard row.count == 4, let id = row[0].text, let product = row[1].text else { return nil }
        return ActiveSpans.Period(transactionID: id, product: product, purchase: row[2].integer, expires: row[3].integer,
                                  revoked: false)
    }

    /// The first day a write of `changes` can change for `subscription`: that of the first
    /// midnight at or after its earliest purchase written (nil: every day, for a write of a row
    /// without a purchase date, which counts as bought from the start).
    private static func firstDay(of subscription: String, in changes: PeriodChanges) -> Int64? {
        guard !changes.undated.contains(subscription) else { return nil }
        return changes.earliestPurchase[subscription].map(ActiveSpans.firstMidnight(atOrAfter:))
    }

    /// What the subscriptions written count now from the first day each write can change, read
    /// inside the writer's transaction.
    static func changes(of subscriptions: Set<String>, periods: PeriodChanges, on statements: some StoreStatements)
        async throws -> Changes {
        var changes: Changes = [:]
        let query = periodsQuery(statements.dialect)
        for id in subscriptions.sorted() {
            let first = firstDay(of: id, in: periods)
            // firstMidnight's days are within the instants a figure takes: no overflow.
            let since = first.map { $0 * FigureInterval.dayMilliseconds } ?? Int64.min
            let held = try await statements.run(query, [.text(id), .integer(since)]).compactMap { period($0) }
            merge(ActiveSpans.dayChanges(of: held, fromDay: first), into: &changes)
        }
        return changes
    }

    /// Adds a subscription's day changes to those gathered in memory.
    private static func merge(_ dayChanges: [ActiveSpans.DayChange], into changes: inout Changes) {
        for change in dayChanges {
            changes[Key(day: change.day, product: change.product), default: 0] += change.change
        }
    }

    /// Adds to the table what the subscriptions count now less what they counted `before` the write.
    static func recordChange(of subscriptions: Set<String>, periods: PeriodChanges, before: Changes,
                             on statements: some StoreStatements) async throws {
        let after = try await changes(of: subscriptions, periods: periods, on: statements)
        try await upsert(difference(after, before), on: statements)
    }

    private static func difference(_ after: Changes, _ before: Changes) -> Changes {
        var difference = after
        for (key, change) in before { difference[key, default: 0] -= change }
        return difference.filter { $0.value != 0 }
    }

    /// Adds `changes` to the table's rows, one at a time in key order.
    private static func upsert(_ changes: Changes, on statements: some StoreStatements) async throws {
        let upsert = statements.dialect.addingUpsert(into: table, key: ["day", "product_id"], counts: ["change"])
        for key in changes.keys.sorted() {
            _ = try await statements.run(upsert, [.integer(key.day), .text(key.product), .integer(changes[key]!)])
        }
    }

    /// Subscriptions read at once while the table is filled at migration.
    static let fillPage = 1000

    /// Fills the table from every subscription held (at migration, into an empty table), a page
    /// of subscriptions at a time down the summaries' key (in the database's own order, which its
    /// index keeps), adding up in memory (a row per day and product).
    static func fill(on statements: some StoreStatements) async throws {
        let d = statements.dialect
        var changes: Changes = [:]
        var after: String?
        while true {
            try Task.checkCancellation()
            let page = try await statements.run(
                "SELECT original_transaction_id FROM \(SubscriptionSummaries.table)"
                    + (after == nil ? "" : " WHERE original_transaction_id > \(d.placeholder(1))")
                    + " ORDER BY original_transaction_id LIMIT \(fillPage)", after.map { [.text($0)] } ?? []
            ).compactMap { $0.first?.text }
            guard let last = page.last else { break }
            let rows = try await statements.run("""
                SELECT original_transaction_id, \(periodColumns) FROM transactions
                WHERE original_transaction_id IN (\(d.placeholders(1...page.count).joined(separator: ", "))) AND \(periodRows)
                """, page.map { .text($0) })
            for (_, rows) in Dictionary(grouping: rows, by: { $0.first?.text ?? "" }) {
                merge(ActiveSpans.dayChanges(of: rows.compactMap { period($0.dropFirst()) }, fromDay: nil), into: &changes)
            }
            after = last
            if page.count < fillPage { break }
        }
        try await upsert(changes.filter { $0.value != 0 }, on: statements)
    }

    /// The subscriptions active at the midnight of each day of `days` (since 1970-01-01 UTC),
    /// `product`'s only when given, in the order given: one running sum over the days' changes.
    static func active(atMidnightsOf days: [Int64], product: String?, on statements: some StoreStatements) async throws
        -> [Int64] {
        guard let last = days.max() else { return [] }
        let d = statements.dialect
        let rows = try await statements.run("""
            SELECT day, CAST(sum(change) AS BIGINT) FROM \(table) WHERE day <= \(d.placeholder(1))
              AND \(StoreFigures.only(product, placeholder: 2, d)) GROUP BY day ORDER BY day
            """, [.integer(last)] + StoreFigures.values(product))
        let changes = rows.compactMap { row -> (day: Int64, change: Int64)? in
            guard row.count == 2, let day = row[0].integer, let change = row[1].integer else { return nil }
            return (day, change)
        }
        var active: [Int64: Int64] = [:]
        var (running, next) = (Int64(0), 0)
        for day in Set(days).sorted() {
            while next < changes.count, changes[next].day <= day {
                running = running.clampedAdding(changes[next].change)
                next += 1
            }
            active[day] = running
        }
        return days.map { active[$0] ?? 0 }
    }
}
