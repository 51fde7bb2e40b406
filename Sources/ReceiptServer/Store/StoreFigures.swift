import ReceiptCore

/// Figures computed in SQL from the fact columns (StoredFacts), once for both databases.
/// Every figure reads the store's auto-renewable subscriptions (one per original
/// transaction id) through one frame (`perSubscription`): each subscription's standing
/// period (the latest-ending one not revoked), its last purchase and its renewal info, and
/// its status by ReceiptCore's rule (SubscriptionState.Status.sqlCase, the rule
/// SubscriptionState applies).
enum StoreFigures {
    /// Subscriptions by product and status at `instant`, each under the product of the
    /// period the status reads (the standing one, else the last purchased); only `product`'s when given.
    static func activeSubscriptions(at instant: Int64, product: String?, on statements: some StoreStatements) async throws
        -> [SubscriptionCount] {
        let d = statements.dialect
        let rows = try await statements.run(perSubscription(
            select: "\(subscriptionProduct), \(status(d)), count(*)",
            where: only(product, subscriptionProduct, placeholder: 2, d), groupBy: "1, 2", dialect: d),
            [.integer(instant)] + values(product))
        return rows.compactMap { row in
            guard row.count == 3, let product = row[0].text, let status = row[1].integer.flatMap(SubscriptionState.Status.init),
                  let count = row[2].integer else { return nil }
            return SubscriptionCount(productID: product, status: status, count: count)
        }
    }

    /// The prices of the subscriptions active at `instant`, by currency and by the length of
    /// their standing period in whole days: what MRR is made of (StatsJSON.mrr); only `product`'s when given.
    static func activePrices(at instant: Int64, product: String?, on statements: some StoreStatements) async throws -> [PriceGroup] {
        let d = statements.dialect
        let rows = try await statements.run(perSubscription(
            select: "coalesce(standing.currency, ''), standing.expires_date - coalesce(standing.purchase_date, 0), count(*), "
                // PostgreSQL adds bigints up as numeric: back to BIGINT, which both read as an integer.
                + "CAST(sum(coalesce(standing.price, 0)) AS BIGINT)",
            where: "(\(status(d))) = \(SubscriptionState.Status.active.rawValue) AND "
                + only(product, subscriptionProduct, placeholder: 2, d), groupBy: "1, 2", dialect: d),
            [.integer(instant)] + values(product))
        return rows.compactMap { row in
            guard row.count == 4, let currency = row[0].text, let length = row[1].integer, let count = row[2].integer,
                  let sum = row[3].integer else { return nil }
            return PriceGroup(currency: currency, periodMilliseconds: length, subscriptions: count, priceSum: sum)
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
        let (p1, p2, p3) = (d.placeholder(1), d.placeholder(2), d.placeholder(3))
        let day = FigureInterval.dayMilliseconds
        func count(_ condition: String) -> String { "CAST(sum(CASE WHEN \(condition) THEN 1 ELSE 0 END) AS BIGINT)" }
        let began = try await statements.run("""
            WITH periods AS (
              SELECT product_id, purchase_date, offer_discount_type, transaction_reason,
                LAG(expires_date) OVER (PARTITION BY original_transaction_id ORDER BY purchase_date, transaction_id) AS previous_end,
                LAG(offer_discount_type) OVER (PARTITION BY original_transaction_id ORDER BY purchase_date, transaction_id)
                  AS previous_offer,
                ROW_NUMBER() OVER (PARTITION BY original_transaction_id ORDER BY purchase_date, transaction_id) AS position
              FROM transactions WHERE product_type = 'Auto-Renewable Subscription' AND purchase_date IS NOT NULL
            )
            SELECT purchase_date / \(day), \(count("position = 1")),
              \(count("position = 1 AND offer_discount_type = 'FREE_TRIAL'")),
              \(count("position > 1 AND purchase_date <= coalesce(previous_end, purchase_date)")),
              \(count("position > 1 AND previous_offer = 'FREE_TRIAL'")),
              \(count("position > 1 AND purchase_date > previous_end AND transaction_reason = 'RENEWAL'")),
              \(count("position > 1 AND purchase_date > previous_end AND coalesce(transaction_reason, '') <> 'RENEWAL'"))
            FROM periods WHERE purchase_date >= \(p1) AND purchase_date < \(p2) AND \(only(product, "product_id", placeholder: 3, d))
            GROUP BY 1 ORDER BY 1
            """, [.integer(from), .integer(to)] + values(product))
        let refunded = try await statements.run("""
            SELECT revocation_date / \(day), coalesce(currency, ''), count(*),
              CAST(sum(coalesce(price, 0) * coalesce(revocation_percentage, 100000) / 100000) AS BIGINT)
            FROM transactions WHERE product_type = 'Auto-Renewable Subscription'
              AND revocation_date >= \(p1) AND revocation_date < \(p2) AND \(only(product, "product_id", placeholder: 3, d))
            GROUP BY 1, 2 ORDER BY 1, 2
            """, [.integer(from), .integer(to)] + values(product))
        let churned = try await statements.run(perSubscription(
            select: "standing.expires_date / \(day), coalesce(renewal.expiration_intent, 0), count(*)",
            where: "(\(status(d))) = \(SubscriptionState.Status.expired.rawValue) AND standing.expires_date >= \(p2) "
                + "AND standing.expires_date < \(p3) AND " + only(product, subscriptionProduct, placeholder: 4, d),
            groupBy: "1, 2", dialect: d),
            [.integer(instant), .integer(from), .integer(to)] + values(product))
        var days: [Int64: DayFlows] = [:]
        for row in began where row.count == 7 {
            guard let day = row[0].integer else { continue }
            let counts = row.dropFirst().map { $0.integer ?? 0 }
            var began = DayFlows.Began()
            (began.new, began.trialStarts, began.renewals) = (counts[0], counts[1], counts[2])
            (began.trialConversions, began.recoveries, began.reactivations) = (counts[3], counts[4], counts[5])
            days[day, default: DayFlows(day: day)].began = began
        }
        for row in refunded where row.count == 4 {
            guard let day = row[0].integer, let currency = row[1].text, let count = row[2].integer else { continue }
            days[day, default: DayFlows(day: day)].refunds.append((currency, count, row[3].integer ?? 0))
        }
        for row in churned where row.count == 3 {
            guard let day = row[0].integer, let intent = row[1].integer, let count = row[2].integer else { continue }
            days[day, default: DayFlows(day: day)].churned.append((intent, count))
        }
        return days.values.sorted { $0.day < $1.day }
    }

    /// The product a subscription is counted under in the frame: its standing period's, else its last purchase's.
    private static let subscriptionProduct = "coalesce(standing.product_id, last.product_id, '')"

    /// The condition that `column` is `product` (at `placeholder`); TRUE when no product is asked.
    private static func only(_ product: String?, _ column: String, placeholder: Int, _ d: StoreDialect) -> String {
        product == nil ? "TRUE" : "\(column) = \(d.placeholder(placeholder))"
    }

    private static func values(_ product: String?) -> [StoreValue] { product.map { [.text($0)] } ?? [] }

    /// The status of the frame's subscription at the instant (placeholder 1).
    private static func status(_ d: StoreDialect) -> String {
        SubscriptionState.Status.sqlCase(StatusInputColumns(
            standingPurchased: "standing.purchase_date", standingExpires: "standing.expires_date",
            lastPurchaseRevoked: "last.revocation_date IS NOT NULL", gracePeriodExpires: "renewal.grace_period_expires_date",
            inBillingRetry: "renewal.is_in_billing_retry_period"), instant: d.placeholder(1))
    }

    /// One row per subscription (`last`), with its `standing` period and `renewal` info.
    /// standing: the latest-ending period not revoked, the earliest bought among equals (as
    /// SubscriptionState keeps the first); last: the latest bought; absent dates sort first.
    private static func perSubscription(select: String, where condition: String = "TRUE", groupBy: String,
                                        dialect d: StoreDialect) -> String {
        let subscription = "product_type = 'Auto-Renewable Subscription'"
        return """
            WITH standing AS (
              SELECT original_transaction_id, product_id, purchase_date, expires_date, price, currency, ROW_NUMBER() OVER (
                PARTITION BY original_transaction_id
                ORDER BY expires_date IS NULL, expires_date DESC, purchase_date IS NOT NULL, purchase_date) AS position
              FROM transactions WHERE \(subscription) AND revocation_date IS NULL
            ), last AS (
              SELECT original_transaction_id, product_id, revocation_date, ROW_NUMBER() OVER (
                PARTITION BY original_transaction_id ORDER BY purchase_date IS NULL, purchase_date DESC) AS position
              FROM transactions WHERE \(subscription)
            )
            SELECT \(select)
            FROM last LEFT JOIN standing ON standing.original_transaction_id = last.original_transaction_id AND standing.position = 1
            LEFT JOIN renewal_infos AS renewal ON renewal.original_transaction_id = last.original_transaction_id
            WHERE last.position = 1 AND \(condition)
            GROUP BY \(groupBy) ORDER BY \(groupBy)
            """
    }
}
