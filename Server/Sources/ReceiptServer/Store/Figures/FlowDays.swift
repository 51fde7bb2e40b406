import ReceiptCore

/// How many auto-renewable periods began on each day (since 1970-01-01 UTC), product and
/// currency, by kind (new, trial start, renewal, trial conversion, recovery, reactivation), and
/// all of them with their prices added up (the revenue's gross): the flows' and the revenue's
/// largest part, kept as counts so that a year of a large store is read as 365 rows a product
/// and currency instead of every period bought in it (a million subscriptions buy about five
/// million a year). A period's kind is told by its row's period columns (SubscriptionSummaries),
/// with the conditions written once here for the counts, for the rows of a partial day, and
/// for the table's fill at migration.
///
/// Every write that changes a subscription's transactions changes the counts by the
/// difference its periods make (`recordChange`): read before the write and after it, in the
/// same transaction, so that the counts always equal what the rows say. A difference is
/// written in (day, product, currency) order (StoreStatements.addRows): two servers writing to one
/// PostgreSQL database lock the rows they share in the same order and never deadlock.
enum FlowDays {
    static let table = "subscription_flow_days"

    /// Each kind's column and the condition on a transaction's row that makes a period of it.
    static let kinds: [(column: String, condition: String)] = [
        ("new_subscriptions", "period_position = 1"),
        ("trial_starts", "period_position = 1 AND \(isFreeTrial())"),
        ("renewals", "period_position > 1 AND purchase_date <= coalesce(previous_expires_date, purchase_date)"),
        ("trial_conversions", "period_position > 1 AND \(isFreeTrial("previous_offer_discount_type"))"),
        ("recoveries", "period_position > 1 AND purchase_date > previous_expires_date AND transaction_reason = 'RENEWAL'"),
        ("reactivations", reactivation),
    ]

    /// That `column` (a row's offer, or its previous period's) names a free trial: how every figure
    /// and list tells a trial (ActiveSpans.Period.freeTrial).
    static func isFreeTrial(_ column: String = "offer_discount_type") -> String { "\(column) = 'FREE_TRIAL'" }

    /// A later period bought after the previous one ended, and not by renewal: the customer bought again.
    static let reactivation = "period_position > 1 AND purchase_date > previous_expires_date "
        + "AND coalesce(transaction_reason, '') <> 'RENEWAL'"

    /// A subscription's first paid period: its first period when paid, or its second when paid
    /// after a free trial (the rates' `new_paying`, the cohorts' members).
    static let firstPaidPeriod = "price > 0 AND (period_position = 1 OR (period_position = 2 "
        + "AND \(isFreeTrial("previous_offer_discount_type"))))"

    /// Beside the kinds, each period whatever its kind and its price: what the revenue's gross adds up.
    static let money: [(column: String, value: String)] = [("periods", "1"), ("price_sum", price)]

    /// What a period adds to the gross: its price (0 where the row names none).
    static let price = "coalesce(price, 0)"

    /// Beside them, what the rates (IntervalRates) count that the kinds do not: paid periods,
    /// those of them refunded, first paid periods, and free trials whose subscription's second
    /// period is paid. The last reads another row (the second period), so a write counts its
    /// subscription's first period again with those it changed (`counts(of:on:)`).
    static let rateCounts: [(column: String, condition: String)] = [
        ("paid_periods", "price > 0"),
        ("refunded_paid_periods", "price > 0 AND revocation_date IS NOT NULL"),
        ("first_paid_periods", firstPaidPeriod),
        ("converted_trials", "period_position = 1 AND \(isFreeTrial()) AND EXISTS ("
            + "SELECT 1 FROM transactions AS second_period WHERE second_period.original_transaction_id = transactions.original_transaction_id "
            + "AND second_period.period_position = 2 AND second_period.purchase_date IS NOT NULL "
            + "AND second_period.product_type = 'Auto-Renewable Subscription' AND second_period.price > 0)"),
    ]

    /// The counted columns, in the order every read and write of the table gives them.
    static let counted = kinds.map(\.column) + money.map(\.column) + rateCounts.map(\.column)

    /// The column that keeps the count the answers name `name` (IntervalFlows.beganNames,
    /// IntervalRates.countNames): the table names two of them otherwise.
    static func column(named name: String) -> String {
        ["new": "new_subscriptions", "new_paying": "first_paid_periods"][name] ?? name
    }

    /// The condition on a period's row that makes it one of the count `name` names (SubscriptionList.Began's names).
    static func condition(named name: String) -> String? {
        let column = column(named: name)
        return (kinds + rateCounts).first { $0.column == column }?.condition
    }

    /// The rows that are periods: auto-renewable transactions numbered among their subscription's,
    /// with a purchase date (a newer copy without one keeps the number an older copy was given).
    static let periods = "product_type = 'Auto-Renewable Subscription' AND period_position IS NOT NULL "
        + "AND purchase_date IS NOT NULL"

    /// The periods bought in [placeholder 1, placeholder 2), which the counts of a part of a day and a list of periods read.
    static func purchasedInRange(_ d: StoreDialect) -> String {
        "purchase_date >= \(d.placeholder(1)) AND purchase_date < \(d.placeholder(2))"
    }

    /// The key's columns as a row of `countsQuery` gives them.
    private static let keyWidth = 3

    /// day, product, currency, then the `counted` columns, of the periods that meet `condition`.
    private static func countsQuery(where condition: String) -> String {
        let counts = kinds.map { "CAST(sum(CASE WHEN \($0.condition) THEN 1 ELSE 0 END) AS BIGINT)" }
            + money.map { "CAST(sum(\($0.value)) AS BIGINT)" }
            + rateCounts.map { "CAST(sum(CASE WHEN \($0.condition) THEN 1 ELSE 0 END) AS BIGINT)" }
        return "SELECT purchase_date / \(FigureInterval.dayMilliseconds), coalesce(product_id, ''), coalesce(currency, ''), "
            + counts.joined(separator: ", ") + " FROM transactions WHERE \(periods) AND \(condition) GROUP BY 1, 2, 3"
    }

    /// What a migration fills the table with: the counts of every row held (StoreSchemaHistory
    /// keeps it as released; the latest release's is this one, so that the counts a migration
    /// makes and those the writes keep are counted alike).
    static var fill: String {
        "INSERT INTO \(table) (day, product_id, currency, \(counted.joined(separator: ", "))) " + countsQuery(where: "TRUE")
    }

    /// A subscription's counts: (day, product, currency) to the `counted` columns.
    typealias Counts = [Key: [Int64]]

    struct Key: Hashable, Comparable {
        let day: Int64
        let product: String
        let currency: String

        /// A day and currency of every product: what the reads add the products' counts up to.
        init(day: Int64, product: String = "", currency: String) {
            (self.day, self.product, self.currency) = (day, product, currency)
        }

        /// The key of a row of `countsQuery` or of the table's reads; nil for a row of another width.
        init?(_ row: [StoreValue]) {
            guard row.count == keyWidth + counted.count, let day = row[0].integer, let product = row[1].text,
                  let currency = row[2].text else { return nil }
            (self.day, self.product, self.currency) = (day, product, currency)
        }

        static func < (a: Self, b: Self) -> Bool { (a.day, a.product, a.currency) < (b.day, b.product, b.currency) }
    }

    /// What the periods a write may change (`changes`: of a subscription, those bought from its
    /// earliest purchase written, and its first period when bought before, whose trial's
    /// conversion is told by the second) count now, read inside the writer's transaction. The
    /// rows bought before the earliest purchase keep their numbers, so before and after the write
    /// the same rows are read; the first period is found down the index of the subscription's
    /// purchases (no scan of its history).
    static func counts(of changes: PeriodChanges, on statements: some StoreStatements) async throws -> Counts {
        var counts: Counts = [:]
        let (subscription, earliest) = (statements.dialect.placeholder(1), statements.dialect.placeholder(2))
        let changed = countsQuery(where: "original_transaction_id = \(subscription) AND purchase_date >= \(earliest)")
        let firstBefore = countsQuery(where: """
            transaction_id = (SELECT transaction_id FROM transactions WHERE original_transaction_id = \(subscription) \
            AND \(periods) ORDER BY purchase_date, transaction_id LIMIT 1) AND purchase_date < \(earliest)
            """)
        for (id, earliest) in changes.earliestPurchase.sorted(by: { $0.key < $1.key }) {
            for statement in [changed, firstBefore] {
                for row in try await statements.run(statement, [.text(id), .integer(earliest)]) {
                    guard let key = Key(row) else { continue }
                    counts[key] = adding(row, to: counts[key])
                }
            }
        }
        return counts
    }

    /// Adds to the table what the periods count now less what they counted `before` the write.
    static func recordChange(of changes: PeriodChanges, before: Counts, on statements: some StoreStatements) async throws {
        let after = try await counts(of: changes, on: statements)
        let zero = Array(repeating: Int64(0), count: counted.count)
        var rows: [[StoreValue]] = []
        for key in Set(before.keys).union(after.keys).sorted() {
            let difference = try zip(after[key] ?? zero, before[key] ?? zero).map { after, before in
                // Both are the database's sums, so only prices of both signs and extreme sizes get here.
                let (difference, overflow) = after.subtractingReportingOverflow(before)
                if overflow { throw StoreRowRefused(description: "the periods' prices add up past 64 bits") }
                return difference
            }
            guard difference.contains(where: { $0 != 0 }) else { continue }
            rows.append([.integer(key.day), .text(key.product), .text(key.currency)] + difference.map { .integer($0) })
        }
        try await statements.addRows(rows, into: table, key: ["day", "product_id", "currency"], counts: counted)
    }

    /// Each day's counts of the periods bought in [from, to) (from ≥ 0), `product`'s only when
    /// given, by kind (in `kinds` order) whatever their currency: (day, counts), by day.
    static func began(from: Int64, to: Int64, product: String?, on statements: some StoreStatements) async throws
        -> [(day: Int64, counts: [Int64])] {
        try await perDay(kinds.map(\.column), from: from, to: to, product: product, on: statements)
    }

    /// What the rates count (IntervalRates.countNames, in its order) of the periods bought each
    /// day of [from, to) (from ≥ 0), `product`'s only when given, whatever their currency.
    static func rates(from: Int64, to: Int64, product: String?, on statements: some StoreStatements) async throws
        -> [(day: Int64, counts: [Int64])] {
        try await perDay(IntervalRates.countNames.map(column(named:)), from: from, to: to, product: product, on: statements)
    }

    /// Each day's sums of some `counted` columns (in the order given) over the periods bought in
    /// [from, to), `product`'s only when given, whatever their currency: (day, sums), by day.
    private static func perDay(_ columns: [String], from: Int64, to: Int64, product: String?,
                               on statements: some StoreStatements) async throws -> [(day: Int64, counts: [Int64])] {
        let places = columns.map { counted.firstIndex(of: $0)! }
        var days: [Int64: [Int64]] = [:]
        for (key, sums) in try await sums(from: from, to: to, product: product, on: statements) {
            days[key.day] = zip(days[key.day] ?? Array(repeating: 0, count: places.count), places.map { sums[$0] })
                .map { $0.clampedAdding($1) }
        }
        return days.keys.sorted().map { ($0, days[$0]!) }
    }

    /// Each day's periods bought in [from, to) (from ≥ 0) per currency, `product`'s only when
    /// given: how many and their prices added up (the revenue's gross), by day and currency.
    static func purchases(from: Int64, to: Int64, product: String?, on statements: some StoreStatements) async throws
        -> [StoreFigures.DayMoney] {
        let (periods, prices) = (counted.firstIndex(of: "periods")!, counted.firstIndex(of: "price_sum")!)
        return try await sums(from: from, to: to, product: product, on: statements).sorted { $0.key < $1.key }.map { key, sums in
            (key.day, key.currency, sums[periods], sums[prices])
        }
    }

    /// The `counted` columns of the periods bought in [from, to) (from ≥ 0), `product`'s only
    /// when given, per day and currency (the key's product left empty). Whole days are read from
    /// the table, the partial days at either end from the rows.
    private static func sums(from: Int64, to: Int64, product: String?, on statements: some StoreStatements) async throws
        -> Counts {
        let d = statements.dialect
        let day = FigureInterval.dayMilliseconds
        let (firstWhole, endWhole) = ((from + day - 1) / day, to / day)
        let productValue = StoreFigures.values(product)
        let onlyProduct = StoreFigures.only(product, placeholder: 3, d)
        var parts: [[[StoreValue]]] = []
        func fromRows(_ start: Int64, _ end: Int64) async throws {
            guard start < end else { return }
            let condition = "\(purchasedInRange(d)) AND \(onlyProduct)"
            parts.append(try await statements.run(countsQuery(where: condition), [.integer(start), .integer(end)] + productValue))
        }
        if firstWhole >= endWhole {
            try await fromRows(from, to)
        } else {
            try await fromRows(from, firstWhole * day)
            let sums = counted.map { "CAST(sum(\($0)) AS BIGINT)" }.joined(separator: ", ")
            parts.append(try await statements.run("""
                SELECT day, '', currency, \(sums) FROM \(table) WHERE day >= \(d.placeholder(1)) AND day < \(d.placeholder(2))
                  AND \(onlyProduct) GROUP BY day, currency
                """, [.integer(firstWhole), .integer(endWhole)] + productValue))
            try await fromRows(endWhole * day, to)
        }
        var sums: Counts = [:]
        for row in parts.joined() {
            guard let key = Key(row) else { continue }
            let perDay = Key(day: key.day, currency: key.currency)
            sums[perDay] = adding(row, to: sums[perDay])
        }
        // A kept row a write took every period from (a copy of another day, product or currency) counts nothing.
        return sums.filter { $0.value.contains { $0 != 0 } }
    }

    /// `sums` (none yet: zeros) plus the counts of a row of `countsQuery` (its key, then the `counted` columns).
    private static func adding(_ row: [StoreValue], to sums: [Int64]?) -> [Int64] {
        zip(sums ?? Array(repeating: 0, count: counted.count), row.dropFirst(keyWidth).map { $0.integer ?? 0 })
            .map { $0.clampedAdding($1) }
    }
}
