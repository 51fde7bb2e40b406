import ReceiptCore

/// The subscriptions active at each midnight (UTC), kept as changes per day under what each stands
/// as (ActiveSpans.Standing: product, currency, plan length in days, free trial or not), with their
/// prices (ActiveSpans: a subscription's span of activity adds one and its price on the first
/// midnight it covers and takes them back on the first midnight after it), so that what stood at
/// any midnight is a sum over the days before it: the churn rate's denominator at each interval's
/// start, and the active subscriptions, trials and MRR at each interval's end, read without
/// reading the subscriptions as they stood then.
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

    typealias Changes = [Key: Sums]

    /// A row's key: a day and what the subscriptions counted on it stand as (their prices apart).
    struct Key: Hashable, Comparable {
        let day: Int64
        let product: String
        let currency: String
        let periodDays: Int64
        let freeTrial: Bool

        init(day: Int64, _ standing: ActiveSpans.Standing) {
            (self.day, product, currency) = (day, standing.product, standing.currency)
            (periodDays, freeTrial) = (standing.periodDays, standing.freeTrial)
        }

        static func < (a: Self, b: Self) -> Bool {
            (a.day, a.product, a.currency, a.periodDays, a.freeTrial ? 1 : 0) < (b.day, b.product, b.currency, b.periodDays, b.freeTrial ? 1 : 0)
        }
    }

    /// A row's counts: subscriptions, and their prices added (milliunits of the key's currency).
    struct Sums: Equatable {
        var subscriptions: Int64 = 0
        var prices: Int64 = 0

        /// These with `other` added (`sign` 1) or taken away (-1). Prices that pass 64 bits refuse
        /// the write, as the flows' do (FlowDays), rather than count a wrong sum.
        func adding(_ other: Sums, sign: Int64 = 1) throws -> Sums {
            let (scaled, flipped) = other.prices.multipliedReportingOverflow(by: sign)
            let (prices, overflow) = self.prices.addingReportingOverflow(scaled)
            if flipped || overflow { throw StoreRowRefused(description: "the periods' prices add up past 64 bits") }
            return Sums(subscriptions: subscriptions.clampedAdding(other.subscriptions.clampedMultiplied(by: sign)), prices: prices)
        }

        var isZero: Bool { subscriptions == 0 && prices == 0 }
    }

    /// The rows that can stand at a midnight: auto-renewable, not revoked, with an end.
    private static let periodRows = "product_type = 'Auto-Renewable Subscription' AND revocation_date IS NULL "
        + "AND expires_date IS NOT NULL"
    /// What ActiveSpans.Period reads of a row; a free trial as the flows tell one (FlowDays).
    private static let periodColumns = "transaction_id, coalesce(product_id, ''), purchase_date, expires_date, "
        + "coalesce(currency, ''), price, CASE WHEN offer_discount_type = 'FREE_TRIAL' THEN 1 ELSE 0 END"

    /// The periods of one subscription (placeholder 1) that end after an instant (placeholder 2):
    /// those that can stand at a midnight from then on, read down the index of its ends.
    private static func periodsQuery(_ d: StoreDialect) -> String {
        "SELECT \(periodColumns) FROM transactions WHERE original_transaction_id = \(d.placeholder(1)) AND \(periodRows) "
            + "AND expires_date > \(d.placeholder(2))"
    }

    private static func period(_ row: some Collection<StoreValue>) -> ActiveSpans.Period? {
        let row = Array(row)
        guard row.count == 7, let id = row[0].text, let product = row[1].text, let currency = row[4].text else { return nil }
        return ActiveSpans.Period(transactionID: id, product: product, purchase: row[2].integer, expires: row[3].integer,
                                  revoked: false, currency: currency, price: row[5].integer, freeTrial: row[6].integer == 1)
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
            try merge(ActiveSpans.dayChanges(of: held, fromDay: first), into: &changes)
        }
        return changes
    }

    /// Adds a subscription's day changes, and as many of its price, to those gathered in memory.
    private static func merge(_ dayChanges: [ActiveSpans.DayChange], into changes: inout Changes) throws {
        for change in dayChanges {
            let key = Key(day: change.day, change.standing)
            changes[key] = try changes[key, default: Sums()].adding(Sums(subscriptions: 1, prices: change.standing.price),
                                                                    sign: change.change)
        }
    }

    /// Adds to the table what the subscriptions count now less what they counted `before` the write.
    static func recordChange(of subscriptions: Set<String>, periods: PeriodChanges, before: Changes,
                             on statements: some StoreStatements) async throws {
        let after = try await changes(of: subscriptions, periods: periods, on: statements)
        try await upsert(try difference(after, before), on: statements)
    }

    private static func difference(_ after: Changes, _ before: Changes) throws -> Changes {
        var difference = after
        for (key, sums) in before { difference[key] = try difference[key, default: Sums()].adding(sums, sign: -1) }
        return difference.filter { !$0.value.isZero }
    }

    /// Adds `changes` to the table's rows, one at a time in key order.
    private static func upsert(_ changes: Changes, on statements: some StoreStatements) async throws {
        let upsert = statements.dialect.addingUpsert(into: table, key: ["day", "product_id", "currency", "period_days", "free_trial"],
                                                     counts: ["change", "price_change"])
        for key in changes.keys.sorted() {
            let sums = changes[key]!
            _ = try await statements.run(upsert, [.integer(key.day), .text(key.product), .text(key.currency), .integer(key.periodDays),
                                                  .integer(key.freeTrial ? 1 : 0), .integer(sums.subscriptions), .integer(sums.prices)])
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
                try merge(ActiveSpans.dayChanges(of: rows.compactMap { period($0.dropFirst()) }, fromDay: nil), into: &changes)
            }
            after = last
            if page.count < fillPage { break }
        }
        try await upsert(changes.filter { !$0.value.isZero }, on: statements)
    }

    /// What stood at the midnight of each day of `days` (since 1970-01-01 UTC), `product`'s only
    /// when given, in the order given: one running sum over the days' changes, per currency, plan
    /// length and free trial or not.
    static func standing(atMidnightsOf days: [Int64], product: String?, on statements: some StoreStatements) async throws
        -> [ActiveStanding] {
        guard let last = days.max() else { return [] }
        let d = statements.dialect
        let rows = try await statements.run("""
            SELECT day, currency, period_days, free_trial, CAST(sum(change) AS BIGINT), CAST(sum(price_change) AS BIGINT)
            FROM \(table) WHERE day <= \(d.placeholder(1)) AND \(StoreFigures.only(product, placeholder: 2, d))
            GROUP BY day, currency, period_days, free_trial ORDER BY day
            """, [.integer(last)] + StoreFigures.values(product))
        let changes = rows.compactMap { row -> (day: Int64, standing: ActiveSpans.Standing, sums: Sums)? in
            guard row.count == 6, let day = row[0].integer, let currency = row[1].text, let periodDays = row[2].integer,
                  let trial = row[3].integer, let count = row[4].integer, let prices = row[5].integer else { return nil }
            return (day, ActiveSpans.Standing(product: "", currency: currency, periodDays: periodDays, freeTrial: trial == 1),
                    Sums(subscriptions: count, prices: prices))
        }
        var standing: [Int64: ActiveStanding] = [:]
        var running: [ActiveSpans.Standing: Sums] = [:]
        var next = 0
        for day in Set(days).sorted() {
            while next < changes.count, changes[next].day <= day {
                // The database added each day's prices up within 64 bits; so do their running sums, or refuse.
                running[changes[next].standing] = try running[changes[next].standing, default: Sums()].adding(changes[next].sums)
                next += 1
            }
            standing[day] = stood(running)
        }
        return days.map { standing[$0] ?? ActiveStanding() }
    }

    /// What the running sums say stood: every subscription, the free trials, and the prices by
    /// currency and length (trials and paid together, as MRR counts every active subscription).
    private static func stood(_ running: [ActiveSpans.Standing: Sums]) -> ActiveStanding {
        var figure = ActiveStanding()
        var prices: [String: [Int64: Sums]] = [:]
        for (key, sums) in running where sums.subscriptions != 0 {
            figure.active = figure.active.clampedAdding(sums.subscriptions)
            if key.freeTrial { figure.trials = figure.trials.clampedAdding(sums.subscriptions) }
            let held = prices[key.currency, default: [:]][key.periodMilliseconds, default: Sums()]
            prices[key.currency, default: [:]][key.periodMilliseconds] = Sums(
                subscriptions: held.subscriptions.clampedAdding(sums.subscriptions), prices: held.prices.clampedAdding(sums.prices))
        }
        figure.prices = prices.sorted { $0.key < $1.key }.flatMap { currency, lengths in
            lengths.sorted { $0.key < $1.key }.map {
                PriceGroup(currency: currency, periodMilliseconds: $0.key, subscriptions: $0.value.subscriptions, priceSum: $0.value.prices)
            }
        }
        return figure
    }
}
