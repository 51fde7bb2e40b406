import ReceiptCore

/// The subscriptions' summaries (SubscriptionSummaries) counted by the UTC day their standing
/// period ends, with what their status and MRR need besides that end: the product, the
/// currency and length of the period, whether the last purchase was revoked, whether Apple is
/// retrying billing, and the prices added. The subscriptions and MRR figures at an instant
/// read these counts for every day but the instant's own, and the summaries themselves only
/// where the counts cannot tell: a few thousand rows instead of every subscription held.
///
/// Why the counts tell, by the status rule (SubscriptionState.Status.sqlCase, applied as is
/// to every summary read):
/// - a summary whose period ends on a later day than the instant's is active at it, unless
///   that period was bought after the instant (those are read: `standing_purchase_date` is indexed);
/// - one that ended on an earlier day, or has no end, is not active: revoked if its last
///   purchase was, else in its grace period if that runs past the instant (those are read:
///   `grace_period_expires_date` is indexed), else in billing retry if Apple retries, else expired;
/// - the summaries ending on the instant's own day are read whole.
///
/// Kept like FlowDays: every write that changes summaries adds what they count after it less
/// what they counted before it, in its transaction, its rows in key order (two servers sharing a
/// PostgreSQL database lock shared rows in the same order).
enum ExpiryDays {
    static let table = "subscription_expiry_days"
    /// The day a summary without an end counts under: before any instant's.
    static let noEnd: Int64 = -(1 << 62)
    private static let day = FigureInterval.dayMilliseconds

    /// Each key column and its value from a summary's columns.
    static let keys: [(name: String, type: String, expression: String)] = [
        ("day", "BIGINT", "CASE WHEN standing_expires_date IS NULL THEN \(noEnd) WHEN standing_expires_date >= 0 "
            + "THEN standing_expires_date / \(day) ELSE -((\(day - 1) - standing_expires_date) / \(day)) END"),
        ("product_id", "TEXT", "product_id"),
        ("currency", "TEXT", "coalesce(standing_currency, '')"),
        ("period_length", "BIGINT", "coalesce(standing_expires_date, 0) - coalesce(standing_purchase_date, 0)"),
        ("revoked", "BIGINT", "last_revoked"),
        ("retry", "BIGINT", "CASE WHEN is_in_billing_retry_period = 1 THEN 1 ELSE 0 END"),
    ]

    /// The expression of the key column `name` over a summary's columns.
    private static func key(_ name: String) -> String { keys.first { $0.name == name }!.expression }

    /// The keys, then how many summaries and their prices added, of the summaries meeting `condition`.
    private static func countsQuery(where condition: String) -> String {
        "SELECT " + keys.map(\.expression).joined(separator: ", ")
            + ", count(*), CAST(sum(coalesce(standing_price, 0)) AS BIGINT) FROM \(SubscriptionSummaries.table) WHERE \(condition) "
            + "GROUP BY " + keys.indices.map { String($0 + 1) }.joined(separator: ", ")
    }

    /// One row of the table: its key's values, in `keys` order.
    struct Key: Hashable, Comparable {
        let values: [StoreValue]

        static func < (a: Self, b: Self) -> Bool {
            for (x, y) in zip(a.values, b.values) where x != y {
                if let x = x.integer, let y = y.integer { return x < y }
                return (x.text ?? "") < (y.text ?? "")
            }
            return false
        }
    }

    /// Summaries and prices added, by key.
    typealias Counts = [Key: (subscriptions: Int64, prices: Int64)]

    /// What the summaries of `subscriptions` count now, read inside the writer's transaction.
    static func counts(of subscriptions: Set<String>, on statements: some StoreStatements) async throws -> Counts {
        var counts: Counts = [:]
        let one = countsQuery(where: "original_transaction_id = \(statements.dialect.placeholder(1))")
        for id in subscriptions.sorted() {
            for row in try await statements.run(one, [.text(id)]) where row.count == keys.count + 2 {
                let key = Key(values: Array(row.prefix(keys.count)))
                let sums = counts[key] ?? (0, 0)
                counts[key] = (sums.subscriptions.clampedAdding(row[keys.count].integer ?? 0),
                               sums.prices.clampedAdding(row[keys.count + 1].integer ?? 0))
            }
        }
        return counts
    }

    /// Adds to the table what the summaries count now less what they counted `before` the write.
    static func recordChange(of subscriptions: Set<String>, before: Counts, on statements: some StoreStatements) async throws {
        let after = try await counts(of: subscriptions, on: statements)
        let rows = Set(before.keys).union(after.keys).sorted().compactMap { key -> [StoreValue]? in
            let (now, then) = (after[key] ?? (0, 0), before[key] ?? (0, 0))
            guard now != then else { return nil }
            return key.values + [.integer(now.subscriptions - then.subscriptions), .integer(now.prices - then.prices)]
        }
        try await statements.addRows(rows, into: table, key: keys.map(\.name), counts: ["subscriptions", "price_sum"])
    }

    /// The subscriptions by product and status at `instant`, and the active ones' prices by
    /// currency and period length, `product`'s only when given.
    static func standing(at instant: Int64, product: String?, on statements: some StoreStatements) async throws -> Standing {
        let d = statements.dialect
        let today = FigureInterval.day(of: instant)
        let (start, end) = (today * day, today * day + day)
        var statuses: [StatusKey: Int64] = [:]
        var prices: [PriceKey: (subscriptions: Int64, prices: Int64)] = [:]
        func add(_ product: String, _ status: SubscriptionState.Status, _ count: Int64) {
            statuses[StatusKey(product: product, status: status), default: 0] = statuses[StatusKey(product: product, status: status), default: 0].clampedAdding(count)
        }
        func addPrice(_ product: String, _ currency: String, _ length: Int64, _ count: Int64, _ sum: Int64) {
            let key = PriceKey(product: product, currency: currency, length: length)
            let held = prices[key] ?? (0, 0)
            prices[key] = (held.subscriptions.clampedAdding(count), held.prices.clampedAdding(sum))
        }
        // Periods ending on a later day: active (the ones bought after the instant are taken back below).
        let only = StoreFigures.only(product, placeholder: 2, d)
        for row in try await statements.run("""
            SELECT product_id, currency, period_length, CAST(sum(subscriptions) AS BIGINT), CAST(sum(price_sum) AS BIGINT)
            FROM \(table) WHERE day > \(d.placeholder(1)) AND \(only) GROUP BY 1, 2, 3
            """, [.integer(today)] + StoreFigures.values(product)) where row.count == 5 {
            guard let product = row[0].text, let currency = row[1].text, let length = row[2].integer,
                  let count = row[3].integer else { continue }
            add(product, .active, count)
            addPrice(product, currency, length, count, row[4].integer ?? 0)
        }
        // Periods that ended on an earlier day, or never began: by their flags (grace periods below).
        for row in try await statements.run("""
            SELECT product_id, revoked, retry, CAST(sum(subscriptions) AS BIGINT) FROM \(table)
            WHERE day < \(d.placeholder(1)) AND \(only) GROUP BY 1, 2, 3
            """, [.integer(today)] + StoreFigures.values(product)) where row.count == 4 {
            guard let product = row[0].text, let count = row[3].integer else { continue }
            add(product, row[1].integer == 1 ? .revoked : row[2].integer == 1 ? .billingRetry : .expired, count)
        }
        // The summaries the counts cannot tell, read with the status rule itself: those ending
        // on the instant's day (+1), those bought after the instant among the later days (-1
        // from active), and the grace periods running past it among the earlier days (-1 from
        // what their flags said).
        let columns = ["product_id", StoreFigures.status(d), key("currency"), key("period_length"), "coalesce(standing_price, 0)",
                       key("retry")].joined(separator: ", ")
        let (p1, p2, p3) = (d.placeholder(1), d.placeholder(2), d.placeholder(3))
        // (condition, its values after the instant, the status the counts gave those rows). The
        // unary + keeps SQLite, which has no statistics of these tables, off the index of the
        // ends for the last two: it would scan every later (or earlier) end instead of the few
        // purchases after the instant (or grace periods past it).
        let corrections: [(condition: String, values: [StoreValue], counted: (StoreValue) -> SubscriptionState.Status?)] = [
            ("standing_expires_date >= \(p2) AND standing_expires_date < \(p3)", [.integer(start), .integer(end)], { _ in nil }),
            ("standing_purchase_date > \(p1) AND +standing_expires_date >= \(p2)", [.integer(end)], { _ in .active }),
            ("grace_period_expires_date > \(p1) AND (+standing_expires_date IS NULL OR +standing_expires_date < \(p2)) "
                + "AND last_revoked = 0", [.integer(start)], { retry in retry.integer == 1 ? .billingRetry : .expired }),
        ]
        for (condition, values, counted) in corrections {
            let onlyRows = StoreFigures.only(product, placeholder: values.count + 2, d)
            for row in try await statements.run(
                "SELECT \(columns) FROM \(SubscriptionSummaries.table) WHERE \(condition) AND \(onlyRows)",
                [.integer(instant)] + values + StoreFigures.values(product)) where row.count == 6 {
                guard let product = row[0].text, let status = row[1].integer.flatMap(SubscriptionState.Status.init) else { continue }
                let (currency, length, price) = (row[2].text ?? "", row[3].integer ?? 0, row[4].integer ?? 0)
                if let was = counted(row[5]) {
                    add(product, was, -1)
                    if was == .active { addPrice(product, currency, length, -1, -price) }
                }
                add(product, status, 1)
                if status == .active { addPrice(product, currency, length, 1, price) }
            }
        }
        return Standing(statuses: statuses.filter { $0.value != 0 }, prices: prices.filter { $0.value.subscriptions != 0 })
    }

    /// What the subscriptions and MRR figures at an instant are made of (StoreFigures.counts
    /// and .priceGroups): subscriptions by product and status, the active ones' prices.
    struct Standing: Sendable {
        let statuses: [StatusKey: Int64]
        let prices: [PriceKey: (subscriptions: Int64, prices: Int64)]
    }

    struct StatusKey: Hashable, Sendable {
        let product: String
        let status: SubscriptionState.Status
    }

    struct PriceKey: Hashable, Sendable {
        let product: String
        let currency: String
        let length: Int64
    }
}
