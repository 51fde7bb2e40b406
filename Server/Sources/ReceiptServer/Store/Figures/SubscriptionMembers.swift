import ReceiptCore

/// The subscriptions behind a count of the subscriptions figure, or a churned count of the flows
/// (SubscriptionList): read from the summaries the figure reads and judged by the same rule at the
/// instant, so that the pages of a count hold as many subscriptions as the count.
extension StoreFigures {
    /// At most `limit` + 1 (the one more says another page follows) subscriptions in `statuses` at
    /// `instant`, only those `churn` names when given, `product`'s only when given, after the
    /// original transaction id `cursor`, in the order of their original transaction ids (the
    /// database's own text order, the same for the cursor's comparison and the sort, so the primary
    /// key serves both). The summaries are the subscriptions figure's (the table when it answers for
    /// the instant, else the same made from the rows as of it), the table for a churn, as the flows read it.
    static func members(in statuses: [SubscriptionState.Status], at instant: Int64, product: String?,
                        churn: SubscriptionList.Churn? = nil, after cursor: String?, limit: Int,
                        on statements: some StoreStatements) async throws -> [SubscriptionList.Member] {
        let d = statements.dialect
        var source = Source.table
        if churn == nil, try await !tableAnswers(at: instant, on: statements) { source = .rows }
        var binds: [StoreValue] = [.integer(instant)]
        var conditions = ["(\(status(d))) IN (\(statuses.map { String($0.rawValue) }.joined(separator: ", ")))"]
        if let churn {
            binds += [.integer(churn.from), .integer(churn.to)]
            let intent = "coalesce(expiration_intent, 0)"
            conditions += ["standing_expires_date >= \(d.placeholder(2)) AND standing_expires_date < \(d.placeholder(3))",
                           churn.reason.intent.map { "\(intent) = \($0)" }
                               ?? "\(intent) NOT IN (\(ChurnReason.intents.map { String($0.intent) }.joined(separator: ", ")))"]
        }
        conditions.append(only(product, placeholder: binds.count + 1, d))
        binds += values(product)
        if let cursor {
            binds.append(.text(cursor))
            conditions.append("original_transaction_id > \(d.placeholder(binds.count))")
        }
        let rows = try await statements.run("""
            \(source.prefix(d))SELECT original_transaction_id, coalesce(product_id, '') FROM \(SubscriptionSummaries.table)
            WHERE \(conditions.joined(separator: " AND ")) ORDER BY original_transaction_id LIMIT \(max(1, limit) + 1)
            """, binds)
        return rows.compactMap { row in
            guard row.count == 2, let id = row[0].text, let product = row[1].text else { return nil }
            return SubscriptionList.Member(originalTransactionID: id, productID: product)
        }
    }
}

extension FlowDays {
    /// At most `limit` + 1 periods of `began`'s kind bought in [from, to), `product`'s only when
    /// given, after `cursor`, in the order of their purchase dates then transaction ids (the index of
    /// purchases reads a page without sorting the range): the rows the flows count (`periods` and
    /// the kind's condition; the counts kept per day are their sums). `kinds` lists the kinds in the
    /// order of IntervalFlows.beganNames (a test holds them together).
    static func periods(_ began: SubscriptionList.Began, product: String?, after cursor: SubscriptionList.PeriodPosition?,
                        limit: Int, on statements: some StoreStatements) async throws -> [SubscriptionList.Member] {
        let d = statements.dialect
        var binds: [StoreValue] = [.integer(began.from), .integer(began.to)] + StoreFigures.values(product)
        var conditions = [periods, kinds[began.kind].condition,
                          "purchase_date >= \(d.placeholder(1)) AND purchase_date < \(d.placeholder(2))",
                          StoreFigures.only(product, placeholder: 3, d)]
        if let cursor {
            binds += [.integer(cursor.purchaseDate), .text(cursor.transactionID)]
            conditions.append("(purchase_date, transaction_id) > (\(d.placeholder(binds.count - 1)), \(d.placeholder(binds.count)))")
        }
        let rows = try await statements.run("""
            SELECT original_transaction_id, coalesce(product_id, ''), transaction_id, purchase_date FROM transactions
            WHERE \(conditions.map { "(\($0))" }.joined(separator: " AND "))
            ORDER BY purchase_date, transaction_id LIMIT \(max(1, limit) + 1)
            """, binds)
        return rows.compactMap { row in
            guard row.count == 4, let id = row[0].text, let product = row[1].text, let transaction = row[2].text,
                  let purchased = row[3].integer else { return nil }
            return SubscriptionList.Member(originalTransactionID: id, productID: product,
                                           period: SubscriptionList.PeriodPosition(purchaseDate: purchased, transactionID: transaction))
        }
    }
}
