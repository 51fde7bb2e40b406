import ReceiptCore

/// Figures computed in SQL from the fact columns (StoredFacts), once for both databases.
/// Every figure reads the store's auto-renewable subscriptions (one per original
/// transaction id) through one frame (`perSubscription`): each subscription's standing
/// period (the latest-ending one not revoked), its last purchase and its renewal info, and
/// its status by ReceiptCore's rule (SubscriptionState.Status.sqlCase, the rule
/// SubscriptionState applies).
enum StoreFigures {
    /// Subscriptions by product and status at `instant`, each under the product of the
    /// period the status reads (the standing one, else the last purchased).
    static func activeSubscriptions(at instant: Int64, on statements: some StoreStatements) async throws -> [SubscriptionCount] {
        let rows = try await statements.run(perSubscription(
            select: "coalesce(standing.product_id, last.product_id, ''), \(status(statements.dialect)), count(*)",
            groupBy: "1, 2", dialect: statements.dialect), [.integer(instant)])
        return rows.compactMap { row in
            guard row.count == 3, let product = row[0].text, let status = row[1].integer.flatMap(SubscriptionState.Status.init),
                  let count = row[2].integer else { return nil }
            return SubscriptionCount(productID: product, status: status, count: count)
        }
    }

    /// The prices of the subscriptions active at `instant`, by currency and by the length of
    /// their standing period in whole days: what MRR is made of (StatsJSON.mrr).
    static func activePrices(at instant: Int64, on statements: some StoreStatements) async throws -> [PriceGroup] {
        let d = statements.dialect
        let rows = try await statements.run(perSubscription(
            select: "coalesce(standing.currency, ''), standing.expires_date - coalesce(standing.purchase_date, 0), count(*), "
                // PostgreSQL adds bigints up as numeric: back to BIGINT, which both read as an integer.
                + "CAST(sum(coalesce(standing.price, 0)) AS BIGINT)",
            where: "(\(status(d))) = \(SubscriptionState.Status.active.rawValue)", groupBy: "1, 2", dialect: d),
            [.integer(instant)])
        return rows.compactMap { row in
            guard row.count == 4, let currency = row[0].text, let length = row[1].integer, let count = row[2].integer,
                  let sum = row[3].integer else { return nil }
            return PriceGroup(currency: currency, periodMilliseconds: length, subscriptions: count, priceSum: sum)
        }
    }

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

/// How many subscriptions of a product are in a status.
struct SubscriptionCount: Sendable, Equatable {
    let productID: String
    let status: SubscriptionState.Status
    let count: Int64
}

/// Active subscriptions of one currency whose standing periods last as long.
struct PriceGroup: Sendable, Equatable {
    let currency: String
    let periodMilliseconds: Int64
    let subscriptions: Int64
    /// Their prices added, in milliunits of the currency (a period without a price adds 0).
    let priceSum: Int64
}
