import ReceiptCore

/// The cohorts' rows (IntervalCohort): the first paid periods bought in a range, each with how
/// many periods its subscription continued for after it, and what those subscriptions paid.
/// Read from the transactions' period columns (SubscriptionSummaries numbers them), with the
/// conditions the flows and the rates count by (FlowDays), so that a cohort's size is the
/// rates' `new_paying` of the same days; and the periods behind a cohort's counts (those that
/// continued, with the same rule for a run; a currency's paying, and the periods it paid for).
enum CohortRows {
    /// The first paid periods bought in [placeholder 1, placeholder 2), `product`'s only when
    /// given (placeholder 3): a transaction's row that is one.
    private static func firstPaid(_ product: String?, _ d: StoreDialect) -> String {
        "\(FlowDays.periods) AND \(FlowDays.firstPaidPeriod) AND \(FlowDays.purchasedInRange(d)) "
            + "AND \(StoreFigures.only(product, placeholder: 3, d))"
    }

    /// The first paid periods (`firstPaid`): their subscription, day, currency and place, as `cohort`.
    private static func cohort(_ product: String?, _ d: StoreDialect) -> String {
        "(SELECT original_transaction_id, purchase_date / \(FigureInterval.dayMilliseconds) AS day, "
            + "coalesce(currency, '') AS currency, period_position AS first_position FROM transactions WHERE "
            + "\(firstPaid(product, d))) AS cohort"
    }

    /// How many periods a subscription continued for after its first paid one, at place `first`, over
    /// its rows of `period` (grouped by subscription): its run ends before its first reactivation
    /// after that period, else at its last period.
    private static func continued(after first: String) -> String {
        "coalesce(min(CASE WHEN period.reactivation = 1 AND period.period_position > \(first) "
            + "THEN period.period_position END) - 1, max(period.period_position)) - \(first)"
    }

    /// What a period paid: its price less what was refunded of it.
    private static let net = "\(FlowDays.price) - CASE WHEN revocation_date IS NULL THEN 0 ELSE \(StoreFigures.refundedAmount) END"

    /// Every period with its place, currency, whether it is a reactivation, and what it paid, as `period`.
    private static let period = "(SELECT original_transaction_id, period_position, coalesce(currency, '') AS currency, "
        + "CASE WHEN \(FlowDays.reactivation) THEN 1 ELSE 0 END AS reactivation, \(net) AS net "
        + "FROM transactions WHERE \(FlowDays.periods)) AS period"

    /// In one statement, so that both parts read the same rows (one snapshot):
    /// - per day, currency and number of periods continued after the first paid one, how many
    ///   subscriptions. A run ends before the subscription's first reactivation after its first
    ///   paid period, else at its last period;
    /// - per day of the first paid period and per currency, what the cohort's subscriptions paid
    ///   for every auto-renewable period they bought (before or after it), less what was refunded,
    ///   and for how many periods.
    /// Each part joins the range's first paid periods to their subscriptions' periods and adds up:
    /// no statement per subscription (PostgreSQL ran those at about 40 µs apiece), and no common
    /// table expression, which PostgreSQL cannot estimate (it then compiled the plan, 0.5 s).
    static func read(from: Int64, to: Int64, product: String?, on statements: some StoreStatements) async throws
        -> (firstPaid: [IntervalCohort.FirstPaidDay], revenue: [IntervalCohort.RevenueDay]) {
        let d = statements.dialect
        let joined = "\(cohort(product, d)) JOIN \(period) ON period.original_transaction_id = cohort.original_transaction_id"
        let rows = try await statements.run("""
            SELECT 'runs', day, currency, continued, count(*) FROM (
              SELECT cohort.day, cohort.currency, \(continued(after: "cohort.first_position")) AS continued
              FROM \(joined)
              GROUP BY cohort.original_transaction_id, cohort.day, cohort.currency, cohort.first_position
            ) AS run GROUP BY day, currency, continued
            UNION ALL
            SELECT 'money', cohort.day, period.currency, count(*), CAST(sum(period.net) AS BIGINT) FROM \(joined)
            GROUP BY cohort.day, period.currency
            ORDER BY 1, 2, 3, 4
            """, [.integer(from), .integer(to)] + StoreFigures.values(product))
        var (firstPaid, revenue) = ([IntervalCohort.FirstPaidDay](), [IntervalCohort.RevenueDay]())
        for row in rows {
            guard row.count == 5, let part = row[0].text, let day = row[1].integer, let currency = row[2].text else { continue }
            if part == "runs", let count = row[4].integer {
                firstPaid.append(IntervalCohort.FirstPaidDay(day: day, currency: currency, continued: row[3].integer ?? 0,
                                                             subscriptions: count))
            } else if part == "money" {
                revenue.append(IntervalCohort.RevenueDay(day: day, currency: currency, net: row[4].integer ?? 0,
                                                         periods: row[3].integer ?? 0))
            }
        }
        return (firstPaid, revenue)
    }

    /// At most `limit` + 1 periods behind a count of the cohorts of [from, to), `product`'s only when
    /// given, after `cursor`, in the order of their purchase dates then transaction ids: the first
    /// paid periods whose subscription continued for at least so many periods after it (as `read`
    /// counts a run: `retained`, a checked 1 ... maxPeriods) or that were bought in a currency
    /// (`paying`), each with its price; or every period in a currency of the subscriptions whose
    /// first paid period was bought in the range (`paid`), each with what it paid, less refunds.
    /// None for another count.
    static func members(_ counted: SubscriptionList.Counted, from: Int64, to: Int64, product: String?,
                        after cursor: SubscriptionList.PeriodPosition?, limit: Int,
                        on statements: some StoreStatements) async throws -> [SubscriptionList.Member] {
        let d = statements.dialect
        var binds: [StoreValue] = [.integer(from), .integer(to)] + StoreFigures.values(product)
        let (conditions, amount): ([String], String)
        switch counted {
        case .retained(let periods):
            let run = "(SELECT \(continued(after: "transactions.period_position")) FROM \(period) "
                + "WHERE period.original_transaction_id = transactions.original_transaction_id)"
            (conditions, amount) = ([firstPaid(product, d), "\(run) >= \(periods)"], FlowDays.price)
        case .paying(let currencies):
            conditions = [firstPaid(product, d)] + StoreFigures.inCurrencies(currencies, column: "currency", binds: &binds, d)
            amount = FlowDays.price
        case .paid(let currencies):
            // Read down the index of subscriptions from the cohort's ids, not down every period bought since.
            let cohort = "original_transaction_id IN (SELECT original_transaction_id FROM transactions WHERE \(firstPaid(product, d)))"
            conditions = [FlowDays.periods, cohort] + StoreFigures.inCurrencies(currencies, column: "currency", binds: &binds, d)
            amount = net
        case .status, .churned, .began, .bought, .refunds, .standing, .mrr, .moved:
            return []
        }
        return try await StoreFigures.periodPage(where: conditions, binds, by: "purchase_date", amount: amount, after: cursor,
                                                 limit: limit, on: statements)
    }
}
