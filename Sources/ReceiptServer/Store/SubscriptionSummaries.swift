import ReceiptCore

/// One row per auto-renewable subscription (original transaction id), kept beside the
/// rows it is made of so that a figure reads a row per subscription instead of every
/// transaction: the standing period (the latest-ending one not revoked, the earliest
/// bought among equals, as SubscriptionState keeps the first), whether the last purchase
/// was revoked, and the renewal info's status inputs. Every write that changes a
/// subscription's rows makes its summary again in the same transaction (`refresh`), with
/// the same statement that fills the table at migration and that `receipt stats-sql`
/// gives other engines: the definition exists once. The same refresh numbers the
/// subscription's periods on their transactions' rows (`periodColumns`) for the flows.
enum SubscriptionSummaries {
    static let table = "subscription_summaries"

    /// The table's columns, their types, and the frame's expression of each.
    static let columns: [(name: String, type: String, expression: String)] = [
        ("original_transaction_id", "TEXT PRIMARY KEY", "last.original_transaction_id"),
        // The product a subscription counts under: its standing period's, else its last purchase's.
        ("product_id", "TEXT NOT NULL", "coalesce(standing.product_id, last.product_id, '')"),
        ("standing_purchase_date", "BIGINT", "standing.purchase_date"),
        ("standing_expires_date", "BIGINT", "standing.expires_date"),
        ("standing_price", "BIGINT", "standing.price"),
        ("standing_currency", "TEXT", "standing.currency"),
        ("last_revoked", "BIGINT NOT NULL", "CASE WHEN last.revocation_date IS NOT NULL THEN 1 ELSE 0 END"),
        ("grace_period_expires_date", "BIGINT", "renewal.grace_period_expires_date"),
        ("is_in_billing_retry_period", "BIGINT", "renewal.is_in_billing_retry_period"),
        ("expiration_intent", "BIGINT", "renewal.expiration_intent"),
    ]

    /// Each auto-renewable period's place among its subscription's periods (1 for the first
    /// bought; NULL without a purchase date), and the end and offer of the period before it:
    /// what the flows tell a period's kind by (new, renewal, recovery, reactivation,
    /// conversion), kept on the transaction's row so that they read only the range asked.
    static let periodColumns: [(name: String, type: String, expression: String)] = [
        ("period_position", "BIGINT", "ROW_NUMBER() OVER \(periodOrder)"),
        ("previous_expires_date", "BIGINT", "LAG(expires_date) OVER \(periodOrder)"),
        ("previous_offer_discount_type", "TEXT", "LAG(offer_discount_type) OVER \(periodOrder)"),
    ]
    private static let periodOrder = "(PARTITION BY original_transaction_id ORDER BY purchase_date, transaction_id)"

    /// Schema 6: the table, an index for the churn figure's range, and the table filled from
    /// the rows held; the period columns, indexes for the flows' ranges, and their values.
    static let migration = [
        "CREATE TABLE \(table) (" + columns.map { "\($0.name) \($0.type)" }.joined(separator: ", ") + ")",
        "CREATE INDEX subscription_summaries_by_end ON \(table) (standing_expires_date)",
        "WITH \(frames(scope: nil)) INSERT INTO \(table) (\(columns.map(\.name).joined(separator: ", "))) \(select)",
    ] + periodColumns.map { "ALTER TABLE transactions ADD COLUMN \($0.name) \($0.type)" } + [
        // Covering the flows' statement, so that a range is read from the index alone (SQLite
        // fetching each row from the table instead is 3.5 times as slow).
        "CREATE INDEX transactions_by_purchase ON transactions (purchase_date, product_type, period_position, "
            + "previous_expires_date, offer_discount_type, previous_offer_discount_type, transaction_reason, product_id)",
        "CREATE INDEX transactions_by_revocation ON transactions (revocation_date)",
        periodsUpdate(scope: nil),
    ]

    /// The summaries as a common table expression over the rows themselves (named like the
    /// table), for an engine that holds only the rows: `WITH \(asExpression) SELECT …`.
    static var asExpression: String { "\(frames(scope: nil)), \(table) AS (\(select))" }

    /// Makes the summaries of the subscriptions whose rows a write changed again from their
    /// rows (none when a subscription has no auto-renewable transaction), and the period
    /// columns of those whose transactions changed (a renewal info changes none).
    static func refresh(transactionsOf changedTransactions: Set<String>, renewalInfosOf changedRenewalInfos: Set<String>,
                        on statements: some StoreStatements) async throws {
        let d = statements.dialect
        let one = "original_transaction_id = \(d.placeholder(1))"
        let names = columns.map(\.name)
        // One statement a subscription: an upsert (a subscription's transactions are never deleted).
        let upsert = "WITH \(frames(scope: one)) INSERT INTO \(table) (\(names.joined(separator: ", "))) \(select) "
            + "ON CONFLICT (original_transaction_id) DO UPDATE SET "
            + names.dropFirst().map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        for id in changedTransactions.union(changedRenewalInfos).sorted() {
            _ = try await statements.run(upsert, [.text(id)])
        }
        for id in changedTransactions.sorted() {
            _ = try await statements.run(periodsUpdate(scope: one), [.text(id)])
        }
    }

    /// Writes the period columns of the auto-renewable transactions (`scope`: of some).
    private static func periodsUpdate(scope: String?) -> String {
        """
        WITH periods AS (
          SELECT transaction_id, \(periodColumns.map { "\($0.expression) AS \($0.name)" }.joined(separator: ", "))
          FROM transactions WHERE product_type = 'Auto-Renewable Subscription' AND purchase_date IS NOT NULL\(scope.map { " AND \($0)" } ?? "")
        )
        UPDATE transactions SET \(periodColumns.map { "\($0.name) = periods.\($0.name)" }.joined(separator: ", "))
        FROM periods WHERE transactions.transaction_id = periods.transaction_id
        """
    }

    /// standing and last, each subscription's periods numbered (absent dates sort first);
    /// `scope` limits both to some rows (one subscription at a write).
    private static func frames(scope: String?) -> String {
        let rows = "product_type = 'Auto-Renewable Subscription'" + (scope.map { " AND \($0)" } ?? "")
        return """
            standing AS (
              SELECT original_transaction_id, product_id, purchase_date, expires_date, price, currency, ROW_NUMBER() OVER (
                PARTITION BY original_transaction_id
                ORDER BY expires_date IS NULL, expires_date DESC, purchase_date IS NOT NULL, purchase_date) AS position
              FROM transactions WHERE \(rows) AND revocation_date IS NULL
            ), last AS (
              SELECT original_transaction_id, product_id, revocation_date, ROW_NUMBER() OVER (
                PARTITION BY original_transaction_id ORDER BY purchase_date IS NULL, purchase_date DESC) AS position
              FROM transactions WHERE \(rows)
            )
            """
    }

    /// A row per subscription from the frames: its last purchase, standing period and renewal info.
    private static let select = """
        SELECT \(columns.map { "\($0.expression) AS \($0.name)" }.joined(separator: ", "))
        FROM last LEFT JOIN standing ON standing.original_transaction_id = last.original_transaction_id AND standing.position = 1
        LEFT JOIN renewal_infos AS renewal ON renewal.original_transaction_id = last.original_transaction_id
        WHERE last.position = 1
        """
}
