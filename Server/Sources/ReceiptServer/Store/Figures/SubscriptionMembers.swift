import ReceiptCore

/// The subscriptions behind a count of the subscriptions figure, or a churned count of the flows
/// (SubscriptionList): read from the summaries the figure reads and judged by the same rule at the
/// instant, so that the pages of a count hold as many subscriptions as the count; and the periods
/// behind a count of periods that began, of a revenue line's periods or of refunds, read from the
/// rows the flows and the revenue count.
extension StoreFigures {
    /// At most `limit` + 1 (the one more says another page follows) subscriptions in `statuses` at
    /// `instant` (with `churn`, of those whose standing period ended in its range for its reason: the
    /// flows' churned when `statuses` is expired), those whose standing period is a free trial
    /// or is not when `standingTrial` says (as ActiveDays tells trials from the period's offer),
    /// those an MRR line of `mrr`'s currencies counts (the standing period's currency, and a plan's
    /// length: BillingPeriod) when given, `product`'s only when given, after the
    /// original transaction id `cursor`, in the order of their original transaction ids (the
    /// database's own text order, the same for the cursor's comparison and the sort, so the primary
    /// key serves both). The summaries are the subscriptions figure's (the table when it answers for
    /// the instant, else the same made from the rows as of it), the table for a churn, as the flows read it.
    static func members(in statuses: [SubscriptionState.Status], at instant: Int64, product: String?,
                        churn: (reason: ChurnReason, from: Int64, to: Int64)? = nil, standingTrial: Bool? = nil,
                        mrr: SubscriptionList.Currencies? = nil, after cursor: String?, limit: Int,
                        on statements: some StoreStatements) async throws -> [SubscriptionList.Member] {
        let d = statements.dialect
        var source = Source.table
        if churn == nil, try await !tableAnswers(at: instant, on: statements) { source = .rows }
        var binds: [StoreValue] = [.integer(instant)]
        var conditions = ["(\(status(d))) IN (\(statuses.map { String($0.rawValue) }.joined(separator: ", ")))"]
        if let churn {
            // The flows' churned, of the churn's reason (ChurnReason's intents).
            binds += [.integer(churn.from), .integer(churn.to)]
            conditions += [standingEndedInRange(d), churn.reason.intent.map { "\(expirationIntent) = \($0)" }
                               ?? "\(expirationIntent) NOT IN (\(ChurnReason.intents.map { String($0.intent) }.joined(separator: ", ")))"]
        }
        if let standingTrial {
            conditions.append((standingTrial ? "" : "NOT ") + "EXISTS (SELECT 1 FROM transactions AS standing WHERE "
                + "standing.transaction_id = \(SubscriptionSummaries.table).standing_transaction_id AND \(FlowDays.isFreeTrial("standing.offer_discount_type")))")
        }
        if let mrr {
            conditions += [BillingPeriod.sqlCondition(length: standingLength)]
                + inCurrencies(mrr, column: "standing_currency", binds: &binds, d)
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
    /// given, after `cursor`, in the order of their purchase dates then transaction ids (read down
    /// the index of purchases): the rows the flows or the rates count (`periods` and the kind's
    /// condition, `condition(named:)`; the counts kept per day are their sums). Every name Began
    /// takes has a condition (FlowKindsTests); one without would list nothing.
    static func periods(_ began: SubscriptionList.Began, from: Int64, to: Int64, product: String?,
                        after cursor: SubscriptionList.PeriodPosition?, limit: Int,
                        on statements: some StoreStatements) async throws -> [SubscriptionList.Member] {
        let d = statements.dialect
        return try await StoreFigures.periodPage(
            where: [periods, condition(named: began.name) ?? "FALSE", purchasedInRange(d), StoreFigures.only(product, placeholder: 3, d)],
            [.integer(from), .integer(to)] + StoreFigures.values(product),
            by: "purchase_date", amount: price, after: cursor, limit: limit, on: statements)
    }

    /// At most `limit` + 1 periods bought in [from, to) in `currencies`, `product`'s only when
    /// given, after `cursor`, in the order of their purchase dates then transaction ids: the rows
    /// a revenue line counts as its `periods` and adds the prices of as its `gross` (`periods`
    /// whatever their kind or price; the lines by `coalesce(currency, '')`, as `countsQuery` groups them).
    static func periods(in currencies: SubscriptionList.Currencies, from: Int64, to: Int64, product: String?,
                        after cursor: SubscriptionList.PeriodPosition?, limit: Int,
                        on statements: some StoreStatements) async throws -> [SubscriptionList.Member] {
        let d = statements.dialect
        var binds: [StoreValue] = [.integer(from), .integer(to)] + StoreFigures.values(product)
        let conditions = [periods, purchasedInRange(d), StoreFigures.only(product, placeholder: 3, d)]
            + StoreFigures.inCurrencies(currencies, column: "currency", binds: &binds, d)
        return try await StoreFigures.periodPage(where: conditions, binds, by: "purchase_date", amount: price, after: cursor,
                                                 limit: limit, on: statements)
    }
}

extension StoreFigures {
    /// At most `limit` + 1 periods refunded or revoked in [from, to), `product`'s and `refunds`'
    /// currency's only when given, after `cursor`, in the order of their revocation dates then
    /// transaction ids: the rows the flows' and the revenue's refunds count (`refundedRows`; the
    /// revenue's lines by `coalesce(currency, '')`, its line without a code "").
    static func refundedPeriods(_ refunds: SubscriptionList.Currencies, from: Int64, to: Int64, product: String?,
                                after cursor: SubscriptionList.PeriodPosition?, limit: Int,
                                on statements: some StoreStatements) async throws -> [SubscriptionList.Member] {
        let d = statements.dialect
        var binds: [StoreValue] = [.integer(from), .integer(to)] + values(product)
        let conditions = [refundedRows(d), only(product, placeholder: 3, d)] + inCurrencies(refunds, column: "currency", binds: &binds, d)
        return try await periodPage(where: conditions, binds, by: "revocation_date", amount: refundedAmount, after: cursor,
                                    limit: limit, on: statements)
    }

    /// The condition that a row's currency (`column`) is of `currencies`, as the figures group it
    /// (`coalesce(column, '')`), its code bound after `binds`; none for every currency.
    static func inCurrencies(_ currencies: SubscriptionList.Currencies, column: String, binds: inout [StoreValue],
                             _ d: StoreDialect) -> [String] {
        guard let currency = currencies.currency else { return [] }
        binds.append(.text(currency))
        return ["coalesce(\(column), '') = \(d.placeholder(binds.count))"]
    }

    /// At most `limit` + 1 transactions that meet every one of `conditions` (over `binds`), after
    /// `cursor`, in the order of `dateColumn` then transaction id, each as a period of a list
    /// (its subscription, product, position by that date, and `amount`, what its figure adds up for
    /// it, in its currency). The cursor's date also bounds the date alone, which an index of
    /// `dateColumn` reads from (a row value's comparison may not). The row read is `transactions`,
    /// unaliased, which a condition's correlated subquery names (CohortRows.members).
    static func periodPage(where conditions: [String], _ binds: [StoreValue], by dateColumn: String, amount: String,
                           after cursor: SubscriptionList.PeriodPosition?, limit: Int,
                           on statements: some StoreStatements) async throws -> [SubscriptionList.Member] {
        let d = statements.dialect
        var (conditions, binds) = (conditions, binds)
        if let cursor {
            binds += [.integer(cursor.date), .text(cursor.transactionID)]
            let (date, id) = (d.placeholder(binds.count - 1), d.placeholder(binds.count))
            conditions += ["\(dateColumn) >= \(date)", "(\(dateColumn), transaction_id) > (\(date), \(id))"]
        }
        let rows = try await statements.run("""
            SELECT original_transaction_id, coalesce(product_id, ''), transaction_id, \(dateColumn), \(amount),
              coalesce(currency, '') FROM transactions
            WHERE \(conditions.map { "(\($0))" }.joined(separator: " AND "))
            ORDER BY \(dateColumn), transaction_id LIMIT \(max(1, limit) + 1)
            """, binds)
        return rows.compactMap { row in
            guard row.count == 6, let id = row[0].text, let product = row[1].text, let transaction = row[2].text,
                  let date = row[3].integer, let currency = row[5].text else { return nil }
            // An amount past 64 bits (SQLite gives a real for an overflowing product) is not given; the period still is.
            return SubscriptionList.Member(originalTransactionID: id, productID: product,
                                           period: SubscriptionList.PeriodPosition(date: date, transactionID: transaction),
                                           amount: row[4].integer.map { SubscriptionList.Amount(milliunits: $0, currency: currency) })
        }
    }
}
