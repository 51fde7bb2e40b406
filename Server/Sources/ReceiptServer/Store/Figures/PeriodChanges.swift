import ReceiptCore

/// Where a write may change its subscriptions' periods: from the earliest purchase date among
/// the transactions it writes, as sent and as held (a period's number and predecessor depend on
/// the periods bought before it only). A subscription absent changes no period.
struct PeriodChanges {
    private(set) var earliestPurchase: [String: Int64] = [:]

    /// Read before the write, inside its transaction.
    static func of(_ transactions: [StoredTransaction], on statements: some StoreStatements) async throws -> Self {
        var changes = Self()
        let held = "SELECT purchase_date FROM transactions WHERE transaction_id = \(statements.dialect.placeholder(1))"
        for row in transactions {
            let stored = try await statements.run(held, [.text(row.transactionID)]).first?.first?.integer
            for date in [row.purchaseDate, stored].compactMap({ $0 }) {
                changes.earliestPurchase[row.originalTransactionID] = min(date, changes.earliestPurchase[row.originalTransactionID] ?? date)
            }
        }
        return changes
    }
}
