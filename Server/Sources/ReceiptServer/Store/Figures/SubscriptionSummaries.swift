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
///
/// A write's cost does not grow with the subscription's history: the summary is made from
/// the rows the write changed and the two rows the summary last stood on (`standing_` and
/// `last_transaction_id`), which is the whole subscription's answer unless the write changed
/// one of those two; the periods are numbered again only from the earliest purchase the write
/// changed (PeriodChanges), after the period before it.
enum SubscriptionSummaries {
    static let table = "subscription_summaries"

    /// The table's columns, their types, and the frame's expression of each (schema 6).
    static let columns: [(name: String, type: String, expression: String)] = [
        ("original_transaction_id", "TEXT PRIMARY KEY", "last.original_transaction_id"),
        // The product a subscription counts under: its standing period's, else its last purchase's.
        ("product_id", "TEXT NOT NULL", "coalesce(last.standing_product_id, last.product_id, '')"),
        ("standing_purchase_date", "BIGINT", "last.standing_purchase_date"),
        ("standing_expires_date", "BIGINT", "last.standing_expires_date"),
        ("standing_price", "BIGINT", "last.standing_price"),
        ("standing_currency", "TEXT", "last.standing_currency"),
        ("last_revoked", "BIGINT NOT NULL", "CASE WHEN last.revocation_date IS NOT NULL THEN 1 ELSE 0 END"),
        ("grace_period_expires_date", "BIGINT", "renewal.grace_period_expires_date"),
        ("is_in_billing_retry_period", "BIGINT", "renewal.is_in_billing_retry_period"),
        ("expiration_intent", "BIGINT", "renewal.expiration_intent"),
    ]

    /// The rows the summary stands on (schema 11), which a write's refresh starts from.
    static let sourceColumns: [(name: String, type: String, expression: String)] = [
        ("standing_transaction_id", "TEXT", "last.standing_transaction_id"),
        ("last_transaction_id", "TEXT", "last.transaction_id"),
    ]
    private static var allColumns: [(name: String, type: String, expression: String)] { columns + sourceColumns }

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
    /// The rows that are periods.
    private static let periodRows = "product_type = 'Auto-Renewable Subscription' AND purchase_date IS NOT NULL"

    /// The summaries as they stood at an instant (`instant`: a placeholder or a literal), as a
    /// common table expression over the rows themselves named like the table: made from the
    /// periods bought by then, with no renewal info when one was bought after (StatusInputs).
    /// For `receipt stats-sql` (an engine that holds only the rows), and for a past instant,
    /// which the table (the summaries as they stand now) cannot answer: `WITH … SELECT …`.
    static func asExpression(asOf instant: String) -> String {
        "\(frames(scope: nil, asOf: instant)), \(table) AS (\(select(allColumns, asOf: instant)))"
    }

    /// Makes the summaries of the subscriptions whose rows a write changed again (none when a
    /// subscription has no auto-renewable transaction), and the period columns from each
    /// subscription's earliest purchase the write changed (a renewal info changes none).
    static func refresh(transactions written: [StoredTransaction], renewalInfosOf changedRenewalInfos: Set<String>,
                        periods: PeriodChanges, on statements: some StoreStatements) async throws {
        let d = statements.dialect
        let names = allColumns.map(\.name)
        let writtenBySubscription = Dictionary(grouping: written, by: \.originalTransactionID).mapValues { $0.map(\.transactionID) }
        for id in Set(writtenBySubscription.keys).union(changedRenewalInfos).sorted() {
            let rows = try await sourceRows(of: id, writtenIDs: writtenBySubscription[id] ?? [], on: statements)
            let scope = "original_transaction_id = \(d.placeholder(1))"
                + (rows.map { " AND transaction_id IN (\(d.placeholders(2...($0.count + 1)).joined(separator: ", ")))" } ?? "")
            // One statement a subscription: an upsert (a subscription's transactions are never deleted).
            let upsert = "WITH \(frames(scope: scope)) INSERT INTO \(table) (\(names.joined(separator: ", "))) \(select(allColumns)) "
                + "ON CONFLICT (original_transaction_id) DO UPDATE SET "
                + names.dropFirst().map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
            _ = try await statements.run(upsert, [.text(id)] + (rows ?? []).map { .text($0) })
        }
        for (id, earliest) in periods.earliestPurchase.sorted(by: { $0.key < $1.key }) where writtenBySubscription[id] != nil {
            _ = try await statements.run(periodsUpdate(d), [.text(id), .integer(earliest)])
        }
    }

    /// The rows a subscription's summary is made from after a write of `writtenIDs`: those and
    /// the two it stood on before, which answer as all its rows would since no other row
    /// changed; nil (all its rows) when it had no summary or the write changed one of the two.
    private static func sourceRows(of subscription: String, writtenIDs: [String], on statements: some StoreStatements)
        async throws -> [String]? {
        let held = try await statements.run(
            "SELECT standing_transaction_id, last_transaction_id FROM \(table) WHERE original_transaction_id = "
                + statements.dialect.placeholder(1), [.text(subscription)])
        guard let row = held.first, row.count == 2, let last = row[1].text else { return nil }
        let stoodOn = [row[0].text, last].compactMap { $0 }
        guard !stoodOn.contains(where: writtenIDs.contains) else { return nil }
        return Array(Set(stoodOn + writtenIDs)).sorted()
    }

    /// Writes the period columns of one subscription's auto-renewable transactions (placeholder 1)
    /// bought at or after an instant (placeholder 2), numbered on from the period bought before it.
    private static func periodsUpdate(_ d: StoreDialect) -> String {
        let values = periodColumns.map { "periods.\($0.name)" }
        let assignments = zip(periodColumns, values).map { "\($0.name) = \($1)" }.joined(separator: ", ")
        let (subscription, instant) = (d.placeholder(1), d.placeholder(2))
        let read = "original_transaction_id, transaction_id, purchase_date, expires_date, offer_discount_type"
        // The period before the instant starts the window (for the LAG columns of the first
        // one after it) and is itself left as it is; its position is where the numbering goes on.
        let positions = periodColumns.map { column in
            column.name == "period_position"
                ? "coalesce((SELECT period_position FROM before), 1) - 1 + \(column.expression) AS \(column.name)"
                : "\(column.expression) AS \(column.name)"
        }
        return """
            WITH before AS (
              SELECT \(read), period_position FROM transactions
              WHERE original_transaction_id = \(subscription) AND \(periodRows) AND purchase_date < \(instant)
              ORDER BY purchase_date DESC, transaction_id DESC LIMIT 1
            ), scoped AS (
              SELECT \(read) FROM before
              UNION ALL
              SELECT \(read) FROM transactions
              WHERE original_transaction_id = \(subscription) AND \(periodRows) AND purchase_date >= \(instant)
            ), periods AS (
              SELECT transaction_id, purchase_date, \(positions.joined(separator: ", ")) FROM scoped
            )
            UPDATE transactions SET \(assignments) FROM periods
            WHERE transactions.transaction_id = periods.transaction_id AND periods.purchase_date >= \(instant)
            """
    }

    /// `last`: a subscription's auto-renewable transactions, numbered from the last purchased
    /// (absent dates first; ties by transaction id), each carrying its subscription's standing
    /// period's values (`standing_…`: of the first row in the standing order, the latest-ending
    /// not revoked, NULL when every row is revoked). One pass of window functions, with no join
    /// of one frame to another, which SQLite would read whole for every subscription. `scope`
    /// limits the rows (one subscription's at a write), `instant` to the periods bought by it
    /// (one without a purchase date counts as bought).
    private static func frames(scope: String?, asOf instant: String? = nil) -> String {
        let rows = "product_type = 'Auto-Renewable Subscription'" + (scope.map { " AND \($0)" } ?? "")
            + (instant.map { " AND (purchase_date IS NULL OR purchase_date <= \($0))" } ?? "")
        let standing = ["transaction_id", "product_id", "purchase_date", "expires_date", "price", "currency"].map {
            "CASE WHEN FIRST_VALUE(revocation_date) OVER standing_order IS NULL THEN FIRST_VALUE(\($0)) OVER standing_order END "
                + "AS standing_\($0)"
        }
        return """
            last AS (
              SELECT original_transaction_id, transaction_id, product_id, revocation_date, \(standing.joined(separator: ", ")),
                ROW_NUMBER() OVER (PARTITION BY original_transaction_id
                  ORDER BY purchase_date IS NULL, purchase_date DESC, transaction_id DESC) AS position
              FROM transactions WHERE \(rows)
              WINDOW standing_order AS (PARTITION BY original_transaction_id ORDER BY revocation_date IS NOT NULL,
                expires_date IS NULL, expires_date DESC, purchase_date IS NOT NULL, purchase_date, transaction_id)
            )
            """
    }

    /// A row per subscription from the frames (`chosen` of its columns): its last purchase,
    /// standing period and renewal info; as of `instant`, no renewal info when a period was
    /// bought after it (it speaks of the renewal after the latest period).
    private static func select(_ chosen: [(name: String, type: String, expression: String)], asOf instant: String? = nil) -> String {
        let renewalApplies = instant.map {
            """
             AND NOT EXISTS (SELECT 1 FROM transactions AS later WHERE later.original_transaction_id = last.original_transaction_id
               AND later.product_type = 'Auto-Renewable Subscription' AND later.purchase_date > \($0))
            """
        } ?? ""
        return """
            SELECT \(chosen.map { "\($0.expression) AS \($0.name)" }.joined(separator: ", "))
            FROM last LEFT JOIN renewal_infos AS renewal ON renewal.original_transaction_id = last.original_transaction_id\(renewalApplies)
            WHERE last.position = 1
            """
    }
}
