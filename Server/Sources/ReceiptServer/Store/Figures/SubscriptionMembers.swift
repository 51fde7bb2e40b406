import ReceiptCore

/// The subscriptions behind a count of the subscriptions figure (SubscriptionList): read from the
/// summaries the figure reads (the table when it answers for the instant, else the same made from
/// the rows as of it) and judged by the same status rule at the instant, so that the pages of a
/// count hold as many subscriptions as the count.
extension StoreFigures {
    /// At most `limit` + 1 (the one more says another page follows) subscriptions in `statuses` at
    /// `instant`, `product`'s only when given, after the original transaction id `cursor`, in the
    /// order of their original transaction ids (the database's own text order, the same for the
    /// cursor's comparison and the sort, so the primary key serves both).
    static func members(in statuses: [SubscriptionState.Status], at instant: Int64, product: String?, after cursor: String?,
                        limit: Int, on statements: some StoreStatements) async throws -> [SubscriptionList.Member] {
        let d = statements.dialect
        let source: Source = try await tableAnswers(at: instant, on: statements) ? .table : .rows
        var binds: [StoreValue] = [.integer(instant)]
        var conditions = ["(\(status(d))) IN (\(statuses.map { String($0.rawValue) }.joined(separator: ", ")))"]
        for (column, value) in [("product_id = ", product), ("original_transaction_id > ", cursor)] {
            guard let value else { continue }
            binds.append(.text(value))
            conditions.append(column + d.placeholder(binds.count))
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
