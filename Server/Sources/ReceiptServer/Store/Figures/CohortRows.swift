import ReceiptCore

/// The cohorts' rows (IntervalCohort): the first paid periods bought in a range, each with how
/// many periods its subscription continued for after it, and what those subscriptions paid.
/// Read from the transactions' period columns (SubscriptionSummaries numbers them), with the
/// conditions the flows and the rates count by (FlowDays), so that a cohort's size is the
/// rates' `new_paying` of the same days.
enum CohortRows {
    /// The first paid periods bought in [placeholder 1, placeholder 2), `product`'s only when
    /// given (placeholder 3): their purchase dates' subscriptions.
    private static func firstPaid(_ product: String?, _ d: StoreDialect) -> String {
        "\(FlowDays.periods) AND \(FlowDays.firstPaidPeriod) AND purchase_date >= \(d.placeholder(1)) "
            + "AND purchase_date < \(d.placeholder(2)) AND \(StoreFigures.only(product, placeholder: 3, d))"
    }

    /// Per day, currency and number of periods continued after the first paid one, how many
    /// subscriptions. A run ends before the subscription's first reactivation after its first
    /// paid period, else at its last period; each end is read down the subscription's rows.
    static func firstPaidDays(from: Int64, to: Int64, product: String?, on statements: some StoreStatements) async throws
        -> [IntervalCohort.FirstPaidDay] {
        let d = statements.dialect
        let later = "FROM transactions AS later WHERE later.original_transaction_id = first_paid.original_transaction_id "
            + "AND \(FlowDays.periods)"
        let rows = try await statements.run("""
            SELECT day, currency, continued, count(*) FROM (
              SELECT purchase_date / \(FigureInterval.dayMilliseconds) AS day, coalesce(currency, '') AS currency,
                coalesce((SELECT min(period_position) \(later) AND later.period_position > first_paid.period_position
                            AND \(FlowDays.reactivation)) - 1,
                         (SELECT max(period_position) \(later))) - period_position AS continued
              FROM transactions AS first_paid WHERE \(firstPaid(product, d))
            ) AS cohort GROUP BY day, currency, continued ORDER BY day, currency, continued
            """, [.integer(from), .integer(to)] + StoreFigures.values(product))
        return rows.compactMap { row in
            guard row.count == 4, let day = row[0].integer, let currency = row[1].text, let count = row[3].integer else {
                return nil
            }
            return IntervalCohort.FirstPaidDay(day: day, currency: currency, continued: row[2].integer ?? 0, subscriptions: count)
        }
    }

    /// Per day of the first paid period and per currency, what the cohort's subscriptions paid
    /// for every auto-renewable period they bought (before or after it), less what was refunded.
    static func revenueDays(from: Int64, to: Int64, product: String?, on statements: some StoreStatements) async throws
        -> [IntervalCohort.RevenueDay] {
        let d = statements.dialect
        let rows = try await statements.run("""
            SELECT cohort.day, period.currency, CAST(sum(period.net) AS BIGINT) FROM
              (SELECT original_transaction_id, purchase_date / \(FigureInterval.dayMilliseconds) AS day
               FROM transactions WHERE \(firstPaid(product, d))) AS cohort
              JOIN (SELECT original_transaction_id, coalesce(currency, '') AS currency,
                      coalesce(price, 0) - CASE WHEN revocation_date IS NULL THEN 0 ELSE \(StoreFigures.refundedAmount) END AS net
                    FROM transactions WHERE \(FlowDays.periods)) AS period
                ON period.original_transaction_id = cohort.original_transaction_id
            GROUP BY 1, 2 ORDER BY 1, 2
            """, [.integer(from), .integer(to)] + StoreFigures.values(product))
        return rows.compactMap { row in
            guard row.count == 3, let day = row[0].integer, let currency = row[1].text else { return nil }
            return IntervalCohort.RevenueDay(day: day, currency: currency, net: row[2].integer ?? 0)
        }
    }
}
