import ReceiptCore

/// Figures computed in SQL from the fact columns (StoredFacts), once for both databases.
/// The figures of subscriptions read one row per subscription (SubscriptionSummaries:
/// its standing period, last purchase and renewal info), and judge its status by
/// ReceiptCore's rule (SubscriptionState.Status.sqlCase, the rule SubscriptionState applies).
/// A subscription counts from its first purchase on: before it, it is in no figure.
enum StoreFigures {
    /// Where the summaries are read: the store's table (they stand now), or the same made from
    /// the rows as of the instant (placeholder 1) within the statement: for an engine that holds
    /// only the rows (`receipt stats-sql`), and for an instant some period was bought after.
    enum Source: Sendable {
        case table, rows

        /// What the statement begins with.
        func prefix(_ d: StoreDialect) -> String {
            self == .table ? "" : "WITH \(SubscriptionSummaries.asExpression(asOf: d.placeholder(1))) "
        }
    }

    /// Whether the summaries as they stand now answer for `instant`: unless a period was bought
    /// after it (read down the index of purchases from the instant: none, or a few, at now).
    static func tableAnswers(at instant: Int64, on statements: some StoreStatements) async throws -> Bool {
        try await statements.run("""
            SELECT 1 FROM transactions WHERE purchase_date > \(statements.dialect.placeholder(1))
              AND product_type = 'Auto-Renewable Subscription' LIMIT 1
            """, [.integer(instant)]).isEmpty
    }

    /// Subscriptions by product and status at `instant`, each under the product of the
    /// period the status reads (the standing one, else the last purchased); only `product`'s when given.
    static func activeSubscriptions(at instant: Int64, product: String?, from source: Source = .table,
                                    on statements: some StoreStatements) async throws -> [SubscriptionCount] {
        if source == .table, try await tableAnswers(at: instant, on: statements) {  // the counts per expiry day (ExpiryDays)
            return counts(in: try await ExpiryDays.standing(at: instant, product: product, on: statements))
        }
        let d = statements.dialect
        let rows = try await statements.run(summaries(
            select: "product_id, \(status(d)), count(*)", where: only(product, placeholder: 2, d), groupBy: "1, 2", .rows, d),
            [.integer(instant)] + values(product))
        return rows.compactMap { row in
            guard row.count == 3, let product = row[0].text, let status = row[1].integer.flatMap(SubscriptionState.Status.init),
                  let count = row[2].integer else { return nil }
            return SubscriptionCount(productID: product, status: status, count: count)
        }
    }

    /// The prices of the subscriptions active at `instant`, by currency and by the length of
    /// their standing period in whole days: what MRR is made of (StatsJSON.mrr); only `product`'s when given.
    static func activePrices(at instant: Int64, product: String?, from source: Source = .table,
                             on statements: some StoreStatements) async throws -> [PriceGroup] {
        if source == .table, try await tableAnswers(at: instant, on: statements) {  // the counts per expiry day (ExpiryDays)
            return priceGroups(in: try await ExpiryDays.standing(at: instant, product: product, on: statements), product: product)
        }
        let d = statements.dialect
        let rows = try await statements.run(summaries(
            select: priceColumns,
            where: "(\(status(d))) = \(SubscriptionState.Status.active.rawValue) AND " + only(product, placeholder: 2, d),
            groupBy: "1, 2", .rows, d), [.integer(instant)] + values(product))
        return rows.compactMap { row in
            guard row.count == 4, let currency = row[0].text, let length = row[1].integer, let count = row[2].integer,
                  let sum = row[3].integer else { return nil }
            return PriceGroup(currency: currency, periodMilliseconds: length, subscriptions: count, priceSum: sum)
        }
    }

    /// Active subscriptions' prices grouped by currency and standing period length: the
    /// currency, the length, how many, and their prices' sum. PostgreSQL adds bigints up as
    /// numeric: back to BIGINT, which both read as an integer.
    private static let priceColumns = "coalesce(standing_currency, ''), \(standingLength), "
        + "count(*), CAST(sum(coalesce(standing_price, 0)) AS BIGINT)"

    /// A summary's standing period's length, which tells its plan (BillingPeriod).
    static let standingLength = "standing_expires_date - coalesce(standing_purchase_date, 0)"

    /// Every product's subscriptions by status and active prices at `instant`, in one reading
    /// (the dashboard's subscriptions and MRR; `counts` and `priceGroups` read it): from the
    /// counts kept per expiry day when they answer for the instant, else from the rows as of it.
    static func standing(at instant: Int64, on statements: some StoreStatements) async throws -> ExpiryDays.Standing {
        if try await tableAnswers(at: instant, on: statements) {
            return try await ExpiryDays.standing(at: instant, product: nil, on: statements)
        }
        let d = statements.dialect
        var statuses: [ExpiryDays.StatusKey: Int64] = [:]
        for count in try await activeSubscriptions(at: instant, product: nil, from: .rows, on: statements) {
            statuses[ExpiryDays.StatusKey(product: count.productID, status: count.status)] = count.count
        }
        var prices: [ExpiryDays.PriceKey: (subscriptions: Int64, prices: Int64)] = [:]
        for row in try await statements.run(summaries(
            select: "product_id, " + priceColumns,
            where: "(\(status(d))) = \(SubscriptionState.Status.active.rawValue)", groupBy: "1, 2, 3", .rows, d),
            [.integer(instant)]) where row.count == 5 {
            guard let product = row[0].text, let currency = row[1].text, let length = row[2].integer, let count = row[3].integer,
                  let sum = row[4].integer else { continue }
            prices[ExpiryDays.PriceKey(product: product, currency: currency, length: length)] = (count, sum)
        }
        return ExpiryDays.Standing(statuses: statuses, prices: prices)
    }

    /// The subscriptions figure from what ExpiryDays counted: by product and status, sorted.
    static func counts(in standing: ExpiryDays.Standing) -> [SubscriptionCount] {
        standing.statuses.map { SubscriptionCount(productID: $0.key.product, status: $0.key.status, count: $0.value) }
            .sorted { ($0.productID, $0.status.rawValue) < ($1.productID, $1.status.rawValue) }
    }

    /// What MRR is made of, from what ExpiryDays counted: the active subscriptions' prices by
    /// currency and period length, `product`'s only when given.
    static func priceGroups(in standing: ExpiryDays.Standing, product: String?) -> [PriceGroup] {
        var groups: [String: [Int64: (subscriptions: Int64, prices: Int64)]] = [:]
        for (key, sums) in standing.prices where product == nil || key.product == product {
            let held = groups[key.currency, default: [:]][key.length] ?? (0, 0)
            groups[key.currency, default: [:]][key.length] = (held.subscriptions.clampedAdding(sums.subscriptions),
                                                              held.prices.clampedAdding(sums.prices))
        }
        return groups.sorted { $0.key < $1.key }.flatMap { currency, lengths in
            lengths.sorted { $0.key < $1.key }.map {
                PriceGroup(currency: currency, periodMilliseconds: $0.key, subscriptions: $0.value.subscriptions,
                           priceSum: $0.value.prices)
            }
        }
    }

    /// What happened to subscriptions on each day (since 1970-01-01 UTC) of [from, to):
    /// periods that began (new, trial starts, renewals, trial conversions, recoveries,
    /// reactivations, by how each follows the subscription's period before it), periods
    /// refunded or revoked (and the amount, per currency), and subscriptions expired at
    /// `instant` whose standing period ended that day, by the renewal info's expiration intent.
    /// With `product`, only its periods, refunds and churned subscriptions (a period follows the
    /// subscription's period before it whatever that one's product: an upgrade is a renewal).
    static func flows(from: Int64, to: Int64, at instant: Int64, product: String?, on statements: some StoreStatements) async throws
        -> [DayFlows] {
        let d = statements.dialect
        let day = FigureInterval.dayMilliseconds
        let began = try await FlowDays.began(from: from, to: to, product: product, on: statements)
        let refunded = try await refunds(from: from, to: to, product: product, on: statements)
        let churned = try await statements.run(summaries(
            select: "standing_expires_date / \(day), \(expirationIntent), count(*)",
            where: "(\(status(d))) = \(SubscriptionState.Status.expired.rawValue) AND \(standingEndedInRange(d)) AND "
                + only(product, placeholder: 4, d), groupBy: "1, 2", .table, d),
            [.integer(instant), .integer(from), .integer(to)] + values(product))
        var days: [Int64: DayFlows] = [:]
        for (day, counts) in began {
            days[day, default: DayFlows(day: day)].began = DayFlows.Began(counts: counts)
        }
        for (day, currency, count, amount) in refunded {
            days[day, default: DayFlows(day: day)].refunds.append((currency, count, amount))
        }
        for row in churned where row.count == 3 {
            guard let day = row[0].integer, let intent = row[1].integer, let count = row[2].integer else { continue }
            days[day, default: DayFlows(day: day)].churned.append((intent, count))
        }
        return days.values.sorted { $0.day < $1.day }
    }

    /// The revenue of each day of [from, to) per currency: the prices of the periods that began
    /// (FlowDays), and the amounts refunded (the flows' refunds); only `product`'s periods and
    /// refunds when given.
    static func revenue(from: Int64, to: Int64, product: String?, on statements: some StoreStatements) async throws
        -> [DayRevenue] {
        let purchases = try await FlowDays.purchases(from: from, to: to, product: product, on: statements)
        let refunds = try await refunds(from: from, to: to, product: product, on: statements)
        var days: [DayAndCurrency: DayRevenue] = [:]
        // Each read gives a day and currency once.
        for (field, money) in [(\DayRevenue.began, purchases), (\DayRevenue.refunded, refunds)] {
            for (day, currency, count, amount) in money {
                days[DayAndCurrency(day: day, currency: currency), default: DayRevenue(day: day, currency: currency)][keyPath: field]
                    = (count, amount)
            }
        }
        return days.values.sorted { ($0.day, $0.currency) < ($1.day, $1.currency) }
    }

    private struct DayAndCurrency: Hashable { let day: Int64, currency: String }

    /// How many periods and what amount of money on a day, in a currency.
    typealias DayMoney = (day: Int64, currency: String, count: Int64, amount: Int64)

    /// What was refunded of a revoked transaction's row: `price` × `revocationPercentage` / 100,000,
    /// the whole price without a percentage (truncated toward zero, as both databases divide).
    static let refundedAmount = "coalesce(price, 0) * coalesce(revocation_percentage, 100000) / 100000"

    /// How many periods were refunded or revoked on each day of [from, to) and the amounts
    /// refunded, per currency (by `revocationDate`; `price` × `revocationPercentage` / 100,000, the
    /// whole price without a percentage), auto-renewable subscriptions only, `product`'s only when
    /// given; read down the covering index of revocations.
    static func refunds(from: Int64, to: Int64, product: String?, on statements: some StoreStatements) async throws
        -> [DayMoney] {
        let d = statements.dialect
        let rows = try await statements.run("""
            SELECT revocation_date / \(FigureInterval.dayMilliseconds), coalesce(currency, ''), count(*),
              CAST(sum(\(refundedAmount)) AS BIGINT)
            FROM transactions WHERE \(refundedRows(d)) AND \(only(product, placeholder: 3, d))
            GROUP BY 1, 2 ORDER BY 1, 2
            """, [.integer(from), .integer(to)] + values(product))
        return rows.compactMap { row in
            guard row.count == 4, let day = row[0].integer, let currency = row[1].text, let count = row[2].integer else { return nil }
            return (day, currency, count, row[3].integer ?? 0)
        }
    }

    /// The summaries whose standing period ended in [placeholder 2, placeholder 3): those expired
    /// at the instant among them churned in the range.
    static func standingEndedInRange(_ d: StoreDialect) -> String {
        "standing_expires_date >= \(d.placeholder(2)) AND standing_expires_date < \(d.placeholder(3))"
    }

    /// A summary's expiration intent, 0 where its renewal info names none (ChurnReason sorts it).
    static let expirationIntent = "coalesce(expiration_intent, 0)"

    /// The transactions refunds count: auto-renewable periods refunded or revoked in [placeholder 1, placeholder 2).
    static func refundedRows(_ d: StoreDialect) -> String {
        "product_type = 'Auto-Renewable Subscription' AND revocation_date >= \(d.placeholder(1)) AND revocation_date < \(d.placeholder(2))"
    }

    /// The condition that `product_id` is `product` (at `placeholder`); TRUE when no product is asked.
    static func only(_ product: String?, placeholder: Int, _ d: StoreDialect) -> String {
        product == nil ? "TRUE" : "product_id = \(d.placeholder(placeholder))"
    }

    static func values(_ product: String?) -> [StoreValue] { product.map { [.text($0)] } ?? [] }

    /// The status of a summary at the instant (placeholder 1).
    static func status(_ d: StoreDialect) -> String {
        SubscriptionState.Status.sqlCase(StatusInputColumns(
            standingPurchased: "standing_purchase_date", standingExpires: "standing_expires_date",
            lastPurchaseRevoked: "last_revoked = 1", gracePeriodExpires: "grace_period_expires_date",
            inBillingRetry: "is_in_billing_retry_period"), instant: d.placeholder(1))
    }

    /// A figure's statement over the summaries (SubscriptionSummaries).
    private static func summaries(select: String, where condition: String, groupBy: String, _ source: Source,
                                  _ d: StoreDialect) -> String {
        "\(source.prefix(d))SELECT \(select) FROM \(SubscriptionSummaries.table) WHERE \(condition) GROUP BY \(groupBy) ORDER BY \(groupBy)"
    }
}
