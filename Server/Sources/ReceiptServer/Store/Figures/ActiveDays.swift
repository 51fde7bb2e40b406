import ReceiptCore

/// The subscriptions active at each midnight (UTC), kept as changes per day under what each stands
/// as (ActiveSpans.Standing: product, currency, plan, free trial or not), with their
/// prices (ActiveSpans: a subscription's span of activity adds one and its price on the first
/// midnight it covers and takes them back on the first midnight after it), so that what stood at
/// any midnight is a sum over the days before it: the churn rate's denominator at each interval's
/// start, and the active subscriptions, trials and MRR at each interval's end, read without
/// reading the subscriptions as they stood then. The same reading keeps the MRR moves per day
/// (MRRMoveDays, MRRMovement), which need the midnight before a write's first too, and each
/// subscription's moves (SubscriptionMoves), which a count of them lists.
///
/// Kept like FlowDays: a write can change the spans only from the earliest purchase it writes
/// (PeriodChanges; the periods bought before it stand as they did), so it reads, before and
/// after, the periods that can stand at the midnight before it or later (those not revoked that
/// end after that midnight) and adds the difference of their day changes, its rows in key order. A store
/// that held rows before this table is filled by the same computation, a page of subscriptions at a time.
///
/// Where it may differ from the rows read as of an instant (SubscriptionSummaries.asExpression): a
/// standing period without a product id counts under '' (the rows fall back to the last purchase's
/// product), and periods equal in end and purchase are told apart by their ids in Swift's order
/// (PostgreSQL's by its collation); and a written paid period that expires more than a day before its
/// own purchase would make earlier days' new MRR a reactivation in the rows but not here. Apple's
/// payloads always name the product, no two periods of one subscription share both dates, and none
/// expires before its purchase.
/// The key of a row of sums kept by the differences each write makes (ActiveDays.add): its
/// columns' values, in the order of the table's key.
protocol SumsKey: Hashable, Comparable {
    var values: [StoreValue] { get }
}

enum ActiveDays {
    static let table = "subscription_active_days"

    typealias Changes = [Key: Sums]

    /// What the periods of some subscriptions count in the three tables.
    struct Kept {
        var active: Changes = [:]
        var moves: [MRRMoveDays.Key: Sums] = [:]
        var subscriptionMoves: [SubscriptionMoves.Key: Sums] = [:]
    }

    /// What the figures tell apart of the subscriptions counted on a day, product aside: their
    /// currency, plan and whether a free trial stands.
    struct Group: Hashable, Comparable {
        let currency: String
        /// BillingPeriod's name, '' for a length no plan has.
        let plan: String
        let freeTrial: Bool

        static func < (a: Self, b: Self) -> Bool { (a.currency, a.plan, a.freeTrial ? 1 : 0) < (b.currency, b.plan, b.freeTrial ? 1 : 0) }

        /// The length MRRLine takes for the plan (0 for none).
        var periodMilliseconds: Int64 { BillingPeriod.milliseconds(of: BillingPeriod(rawValue: plan)) }
    }

    /// A row's key: a day, and the product and group of the subscriptions counted on it (their prices apart).
    struct Key: SumsKey {
        let day: Int64
        let product: String
        let group: Group

        init(day: Int64, _ standing: ActiveSpans.Standing) {
            (self.day, product) = (day, standing.product)
            group = Group(currency: standing.currency, plan: standing.plan?.rawValue ?? "", freeTrial: standing.freeTrial)
        }

        var values: [StoreValue] {
            [.integer(day), .text(product), .text(group.currency), .text(group.plan), .integer(group.freeTrial ? 1 : 0)]
        }

        static func < (a: Self, b: Self) -> Bool { (a.day, a.product, a.group) < (b.day, b.product, b.group) }
    }

    /// A row's counts: subscriptions, and their prices added (milliunits of the key's currency; in
    /// MRRMoveDays, the moves' twelfths of a milliunit).
    struct Sums: Equatable {
        var subscriptions: Int64 = 0
        var prices: Int64 = 0

        /// These and `other` added up. Sums past 64 bits refuse the write, as the flows' prices do
        /// (FlowDays), rather than count a wrong one.
        func adding(_ other: Sums) throws -> Sums {
            let (subscriptions, countOverflow) = self.subscriptions.addingReportingOverflow(other.subscriptions)
            let (prices, priceOverflow) = self.prices.addingReportingOverflow(other.prices)
            if countOverflow || priceOverflow { throw StoreRowRefused(description: "the periods' prices add up past 64 bits") }
            return Sums(subscriptions: subscriptions, prices: prices)
        }

        /// These less `other`, refused past 64 bits as `adding` refuses.
        func subtracting(_ other: Sums) throws -> Sums {
            let (subscriptions, countOverflow) = self.subscriptions.subtractingReportingOverflow(other.subscriptions)
            let (prices, priceOverflow) = self.prices.subtractingReportingOverflow(other.prices)
            if countOverflow || priceOverflow { throw StoreRowRefused(description: "the periods' prices add up past 64 bits") }
            return Sums(subscriptions: subscriptions, prices: prices)
        }

        /// Added for a figure read: within 64 bits, the ends where it would pass them.
        func clampedAdding(_ other: Sums) -> Sums {
            Sums(subscriptions: subscriptions.clampedAdding(other.subscriptions), prices: prices.clampedAdding(other.prices))
        }

        var isZero: Bool { subscriptions == 0 && prices == 0 }
    }

    /// The rows that can stand at a midnight: auto-renewable, not revoked, with an end.
    private static let periodRows = "product_type = 'Auto-Renewable Subscription' AND revocation_date IS NULL "
        + "AND expires_date IS NOT NULL"
    /// What ActiveSpans.Period reads of a row; a free trial as the flows tell one (FlowDays).
    private static let periodColumns = "transaction_id, coalesce(product_id, ''), purchase_date, expires_date, "
        + "coalesce(currency, ''), price, CASE WHEN \(FlowDays.isFreeTrial()) THEN 1 ELSE 0 END"

    /// The periods of one subscription (placeholder 1) that end after an instant (placeholder 2):
    /// those that can stand at a midnight from then on, read down the index of its ends; then a
    /// row of nulls if a paid one ended by that instant (what MRRMovement asks of the periods a
    /// write does not read). One statement, not two: each costs a write a trip to the database's
    /// thread and back, which is most of what a write costs (docs/performance.md).
    private static func periodsQuery(_ d: StoreDialect) -> String {
        let (subscription, instant) = (d.placeholder(1), d.placeholder(2))
        return "SELECT \(periodColumns) FROM transactions WHERE original_transaction_id = \(subscription) AND \(periodRows) "
            + "AND expires_date > \(instant) UNION ALL SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM (SELECT 1 AS paid "
            + "FROM transactions WHERE original_transaction_id = \(subscription) AND \(periodRows) AND price > 0 "
            + "AND expires_date <= \(instant) LIMIT 1) AS paid_ended"
    }

    /// Whether a row of periodsQuery is its mark that a paid period ended (a period's id is never null).
    private static func isPaidEndedMark(_ row: [StoreValue]) -> Bool { row.first == .null }

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
    /// inside the writer's transaction: their periods that end after the midnight before that day
    /// (the moves compare each midnight with the one before), and whether a paid one ended before.
    static func changes(of subscriptions: Set<String>, periods: PeriodChanges, on statements: some StoreStatements)
        async throws -> Kept {
        var kept = Kept()
        let query = periodsQuery(statements.dialect)
        for id in subscriptions.sorted() {
            let first = firstDay(of: id, in: periods)
            // firstMidnight's days are within the instants a figure takes: no overflow. Every
            // period ends after Int64.min, so a write from the start reads all and no mark.
            let since = first.map { ($0 - 1) * FigureInterval.dayMilliseconds } ?? Int64.min
            let rows = try await statements.run(query, [.text(id), .integer(since)])
            try merge(rows.compactMap { period($0) }, of: id, fromDay: first, paidEndedBefore: rows.contains(where: isPaidEndedMark),
                      into: &kept)
        }
        return kept
    }

    /// Adds a subscription's day changes (and as many of its price) and its MRR moves (by day, and its
    /// own) to those gathered in memory.
    private static func merge(_ periods: [ActiveSpans.Period], of subscription: String, fromDay: Int64?, paidEndedBefore: Bool,
                              into kept: inout Kept) throws {
        for change in ActiveSpans.dayChanges(of: periods, fromDay: fromDay) {
            let key = Key(day: change.day, change.standing)
            let one = Sums(subscriptions: 1, prices: change.standing.price)
            kept.active[key] = try change.change > 0 ? kept.active[key, default: Sums()].adding(one)
                : kept.active[key, default: Sums()].subtracting(one)
        }
        for move in MRRMovement.dayMoves(of: periods, fromDay: fromDay, paidEndedBefore: paidEndedBefore) {
            let key = MRRMoveDays.Key(day: move.day, currency: move.currency, move: move.move)
            let one = Sums(subscriptions: 1, prices: move.twelfths)
            kept.moves[key] = try kept.moves[key, default: Sums()].adding(one)
            let own = SubscriptionMoves.Key(subscription: subscription, move)
            kept.subscriptionMoves[own] = try kept.subscriptionMoves[own, default: Sums()].adding(one)
        }
    }

    /// Adds to the tables what the subscriptions count now less what they counted `before` the write.
    static func recordChange(of subscriptions: Set<String>, periods: PeriodChanges, before: Kept,
                             on statements: some StoreStatements) async throws {
        let after = try await changes(of: subscriptions, periods: periods, on: statements)
        try await upsert(try difference(after.active, before.active), try difference(after.moves, before.moves), on: statements)
        try await SubscriptionMoves.upsert(try difference(after.subscriptionMoves, before.subscriptionMoves), on: statements)
    }

    private static func difference<K>(_ after: [K: Sums], _ before: [K: Sums]) throws -> [K: Sums] {
        var difference = after
        for (key, sums) in before { difference[key] = try difference[key, default: Sums()].subtracting(sums) }
        return difference.filter { !$0.value.isZero }
    }

    /// Adds the changes to each table's rows, in key order.
    private static func upsert(_ active: Changes, _ moves: [MRRMoveDays.Key: Sums], on statements: some StoreStatements) async throws {
        try await add(active, into: table, key: ["day", "product_id", "currency", "billing_period", "free_trial"],
                      counts: ["change", "price_change"], on: statements)
        try await MRRMoveDays.upsert(moves, on: statements)
    }

    /// Adds each key's sums (its count, then its amount) to `table`'s rows, in key order (StoreStatements.addRows).
    static func add<K: SumsKey>(_ changes: [K: Sums], into table: String, key: [String], counts: [String],
                                on statements: some StoreStatements) async throws {
        let rows = changes.sorted { $0.key < $1.key }.map { $0.key.values + [.integer($0.value.subscriptions), .integer($0.value.prices)] }
        try await statements.addRows(rows, into: table, key: key, counts: counts)
    }

    /// Subscriptions read at once while the table is filled at migration.
    static let fillPage = 1000

    /// Fills the tables from every subscription held (at migration, into empty tables), a page
    /// of subscriptions at a time down the summaries' key (in the database's own order, which its
    /// index keeps), adding up the day counts in memory (a row per key of either table) and writing
    /// each page's own moves (SubscriptionMoves) as it goes.
    static func fill(on statements: some StoreStatements) async throws {
        let d = statements.dialect
        var kept = Kept()
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
            for (subscription, rows) in Dictionary(grouping: rows, by: { $0.first?.text ?? "" }) {
                try merge(rows.compactMap { period($0.dropFirst()) }, of: subscription, fromDay: nil, paidEndedBefore: false,
                          into: &kept)
            }
            try await SubscriptionMoves.upsert(kept.subscriptionMoves.filter { !$0.value.isZero }, on: statements)
            kept.subscriptionMoves = [:]
            after = last
            if page.count < fillPage { break }
        }
        try await upsert(kept.active.filter { !$0.value.isZero }, kept.moves.filter { !$0.value.isZero }, on: statements)
    }

    /// What stood at the midnight of each day of `days` (since 1970-01-01 UTC), `product`'s only
    /// when given, in the order given: one running sum over the days' changes per group (currency,
    /// plan, free trial or not), kept within 64 bits (a figure read refuses nothing).
    static func standing(atMidnightsOf days: [Int64], product: String?, on statements: some StoreStatements) async throws
        -> [ActiveStanding] {
        guard let last = days.max() else { return [] }
        let d = statements.dialect
        let rows = try await statements.run("""
            SELECT day, currency, billing_period, free_trial, CAST(sum(change) AS BIGINT), CAST(sum(price_change) AS BIGINT)
            FROM \(table) WHERE day <= \(d.placeholder(1)) AND \(StoreFigures.only(product, placeholder: 2, d))
            GROUP BY day, currency, billing_period, free_trial ORDER BY day
            """, [.integer(last)] + StoreFigures.values(product))
        let changes = rows.compactMap { row -> (day: Int64, group: Group, sums: Sums)? in
            guard row.count == 6, let day = row[0].integer, let currency = row[1].text, let plan = row[2].text,
                  let trial = row[3].integer, let count = row[4].integer, let prices = row[5].integer else { return nil }
            return (day, Group(currency: currency, plan: plan, freeTrial: trial == 1), Sums(subscriptions: count, prices: prices))
        }
        var standing: [Int64: ActiveStanding] = [:]
        var running: [Group: Sums] = [:]
        var next = 0
        for day in Set(days).sorted() {
            while next < changes.count, changes[next].day <= day {
                running[changes[next].group] = running[changes[next].group, default: Sums()].clampedAdding(changes[next].sums)
                next += 1
            }
            standing[day] = stood(running)
        }
        return days.map { standing[$0] ?? ActiveStanding() }
    }

    /// What the running sums say stood: every subscription, the free trials, and the prices by
    /// currency and length (trials and paid together, as MRR counts every active subscription).
    private static func stood(_ running: [Group: Sums]) -> ActiveStanding {
        var figure = ActiveStanding()
        var prices: [String: [Int64: Sums]] = [:]
        for (key, sums) in running where sums.subscriptions != 0 {
            figure.active = figure.active.clampedAdding(sums.subscriptions)
            if key.freeTrial { figure.trials = figure.trials.clampedAdding(sums.subscriptions) }
            prices[key.currency, default: [:]][key.periodMilliseconds, default: Sums()] =
                prices[key.currency, default: [:]][key.periodMilliseconds, default: Sums()].clampedAdding(sums)
        }
        figure.prices = prices.sorted { $0.key < $1.key }.flatMap { currency, lengths in
            lengths.sorted { $0.key < $1.key }.map {
                PriceGroup(currency: currency, periodMilliseconds: $0.key, subscriptions: $0.value.subscriptions, priceSum: $0.value.prices)
            }
        }
        return figure
    }
}
