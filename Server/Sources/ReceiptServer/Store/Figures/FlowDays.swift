import ReceiptCore

/// How many auto-renewable periods began on each day (since 1970-01-01 UTC) and product, by
/// kind (new, trial start, renewal, trial conversion, recovery, reactivation): the flows'
/// largest part, kept as counts so that a year of a large store is read as 365 rows a product
/// instead of every period bought in it (a million subscriptions buy about five million a
/// year). A period's kind is told by its row's period columns (SubscriptionSummaries), with
/// the conditions written once here for the counts, for the rows of a partial day, and for
/// the table's fill at migration.
///
/// Every write that changes a subscription's transactions changes the counts by the
/// difference its periods make (`recordChange`): read before the write and after it, in the
/// same transaction, so that the counts always equal what the rows say. A difference is
/// written in (day, product) order, one row at a time: two servers writing to one
/// PostgreSQL database lock the rows they share in the same order and never deadlock.
enum FlowDays {
    static let table = "subscription_flow_days"

    /// Each kind's column and the condition on a transaction's row that makes a period of it.
    static let kinds: [(column: String, condition: String)] = [
        ("new_subscriptions", "period_position = 1"),
        ("trial_starts", "period_position = 1 AND offer_discount_type = 'FREE_TRIAL'"),
        ("renewals", "period_position > 1 AND purchase_date <= coalesce(previous_expires_date, purchase_date)"),
        ("trial_conversions", "period_position > 1 AND previous_offer_discount_type = 'FREE_TRIAL'"),
        ("recoveries", "period_position > 1 AND purchase_date > previous_expires_date AND transaction_reason = 'RENEWAL'"),
        ("reactivations", "period_position > 1 AND purchase_date > previous_expires_date "
            + "AND coalesce(transaction_reason, '') <> 'RENEWAL'"),
    ]

    /// The rows that are periods: auto-renewable transactions numbered among their subscription's.
    private static let periods = "product_type = 'Auto-Renewable Subscription' AND period_position IS NOT NULL"

    /// day, product, then each kind's count, of the periods that meet `condition`.
    private static func countsQuery(where condition: String) -> String {
        let counts = kinds.map { "CAST(sum(CASE WHEN \($0.condition) THEN 1 ELSE 0 END) AS BIGINT)" }
        return "SELECT purchase_date / \(FigureInterval.dayMilliseconds), coalesce(product_id, ''), "
            + counts.joined(separator: ", ") + " FROM transactions WHERE \(periods) AND \(condition) GROUP BY 1, 2"
    }

    /// A subscription's counts: (day, product) to each kind's count.
    typealias Counts = [DayProduct: [Int64]]

    struct DayProduct: Hashable, Comparable {
        let day: Int64
        let product: String

        static func < (a: Self, b: Self) -> Bool { (a.day, a.product) < (b.day, b.product) }
    }

    /// What the periods a write may change (`changes`: of a subscription, those bought from its
    /// earliest purchase written) count now, read inside the writer's transaction.
    static func counts(of changes: PeriodChanges, on statements: some StoreStatements) async throws -> Counts {
        var counts: Counts = [:]
        let d = statements.dialect
        let scoped = countsQuery(where: "original_transaction_id = \(d.placeholder(1)) AND purchase_date >= \(d.placeholder(2))")
        for (id, earliest) in changes.earliestPurchase.sorted(by: { $0.key < $1.key }) {
            for row in try await statements.run(scoped, [.text(id), .integer(earliest)]) where row.count == 2 + kinds.count {
                guard let day = row[0].integer, let product = row[1].text else { continue }
                let key = DayProduct(day: day, product: product)
                counts[key] = adding(row, to: counts[key])
            }
        }
        return counts
    }

    /// Adds to the table what the periods count now less what they counted `before` the write.
    static func recordChange(of changes: PeriodChanges, before: Counts, on statements: some StoreStatements) async throws {
        let after = try await counts(of: changes, on: statements)
        let upsert = statements.dialect.addingUpsert(into: table, key: ["day", "product_id"], counts: kinds.map(\.column))
        let zero = Array(repeating: Int64(0), count: kinds.count)
        for key in Set(before.keys).union(after.keys).sorted() {
            let difference = zip(after[key] ?? zero, before[key] ?? zero).map(-)
            guard difference.contains(where: { $0 != 0 }) else { continue }
            _ = try await statements.run(upsert, [.integer(key.day), .text(key.product)] + difference.map { .integer($0) })
        }
    }

    /// Each day's counts of the periods bought in [from, to) (from ≥ 0), `product`'s only when
    /// given: (day, counts in `kinds` order), by day. Whole days are read from the table, the
    /// partial days at either end from the rows.
    static func began(from: Int64, to: Int64, product: String?, on statements: some StoreStatements) async throws
        -> [(day: Int64, counts: [Int64])] {
        let d = statements.dialect
        let day = FigureInterval.dayMilliseconds
        let (firstWhole, endWhole) = ((from + day - 1) / day, to / day)
        let productValue = StoreFigures.values(product)
        let onlyProduct = StoreFigures.only(product, placeholder: 3, d)
        var parts: [[[StoreValue]]] = []
        func fromRows(_ start: Int64, _ end: Int64) async throws {
            guard start < end else { return }
            let condition = "purchase_date >= \(d.placeholder(1)) AND purchase_date < \(d.placeholder(2)) AND \(onlyProduct)"
            parts.append(try await statements.run(countsQuery(where: condition), [.integer(start), .integer(end)] + productValue))
        }
        if firstWhole >= endWhole {
            try await fromRows(from, to)
        } else {
            try await fromRows(from, firstWhole * day)
            let sums = kinds.map { "CAST(sum(\($0.column)) AS BIGINT)" }.joined(separator: ", ")
            parts.append(try await statements.run("""
                SELECT day, '', \(sums) FROM \(table) WHERE day >= \(d.placeholder(1)) AND day < \(d.placeholder(2))
                  AND \(onlyProduct) GROUP BY day
                """, [.integer(firstWhole), .integer(endWhole)] + productValue))
            try await fromRows(endWhole * day, to)
        }
        var days: [Int64: [Int64]] = [:]
        for row in parts.joined() where row.count == 2 + kinds.count {
            guard let day = row[0].integer else { continue }
            days[day] = adding(row, to: days[day])
        }
        return days.keys.sorted().map { ($0, days[$0]!) }
    }

    /// `sums` (none yet: zeros) plus the counts of a row of `countsQuery` (day, product, counts).
    private static func adding(_ row: [StoreValue], to sums: [Int64]?) -> [Int64] {
        zip(sums ?? Array(repeating: 0, count: kinds.count), row.dropFirst(2).map { $0.integer ?? 0 }).map(+)
    }
}
