import ReceiptCore

/// Figures computed in SQL from the fact columns (StoredFacts), once for both databases.
enum StoreFigures {
    /// Auto-renewable subscriptions (one per original transaction id) by product and status
    /// at `instant`: each subscription's status by ReceiptCore's rule
    /// (SubscriptionState.Status.sqlCase, the rule SubscriptionState applies), its product
    /// that of the period the status reads (the standing one, else the last purchased).
    static func activeSubscriptions(at instant: Int64, on statements: some StoreStatements) async throws -> [SubscriptionCount] {
        let d = statements.dialect
        let subscription = "product_type = 'Auto-Renewable Subscription'"
        let status = SubscriptionState.Status.sqlCase(StatusInputColumns(
            standingPurchased: "standing.purchase_date", standingExpires: "standing.expires_date",
            lastPurchaseRevoked: "last.revocation_date IS NOT NULL", gracePeriodExpires: "renewal.grace_period_expires_date",
            inBillingRetry: "renewal.is_in_billing_retry_period"), instant: d.placeholder(1))
        // standing: the latest-ending period not revoked (the earliest bought among equals, as
        // SubscriptionState keeps the first); last: the latest bought (absent dates sort first).
        let rows = try await statements.run("""
            WITH standing AS (
              SELECT original_transaction_id, product_id, purchase_date, expires_date, ROW_NUMBER() OVER (
                PARTITION BY original_transaction_id
                ORDER BY expires_date IS NULL, expires_date DESC, purchase_date IS NOT NULL, purchase_date) AS position
              FROM transactions WHERE \(subscription) AND revocation_date IS NULL
            ), last AS (
              SELECT original_transaction_id, product_id, revocation_date, ROW_NUMBER() OVER (
                PARTITION BY original_transaction_id ORDER BY purchase_date IS NULL, purchase_date DESC) AS position
              FROM transactions WHERE \(subscription)
            )
            SELECT coalesce(standing.product_id, last.product_id, '') AS product, \(status) AS status, count(*)
            FROM last LEFT JOIN standing ON standing.original_transaction_id = last.original_transaction_id AND standing.position = 1
            LEFT JOIN renewal_infos AS renewal ON renewal.original_transaction_id = last.original_transaction_id
            WHERE last.position = 1
            GROUP BY 1, 2 ORDER BY 1, 2
            """, [.integer(instant)])
        return rows.compactMap { row in
            guard row.count == 3, let product = row[0].text, let status = row[1].integer.flatMap(SubscriptionState.Status.init),
                  let count = row[2].integer else { return nil }
            return SubscriptionCount(productID: product, status: status, count: count)
        }
    }
}

/// How many subscriptions of a product are in a status.
struct SubscriptionCount: Sendable, Equatable {
    let productID: String
    let status: SubscriptionState.Status
    let count: Int64
}
