import ReceiptCore

/// Where a write may change its subscriptions' periods: from the earliest purchase date among
/// the transactions it writes, as sent and as held (a period's number and predecessor depend on
/// the periods bought before it only). A subscription absent changes no period. Beside it, the
/// subscriptions of which the write sends or replaces a row without a purchase date: such a row
/// counts as bought from the start where a past instant is judged (ActiveDays), so it may change
/// every day of them.
struct PeriodChanges {
    private(set) var earliestPurchase: [String: Int64] = [:]
    private(set) var undated: Set<String> = []

    /// Read before the write, inside its transaction.
    static func of(_ transactions: [StoredTransaction], on statements: some StoreStatements) async throws -> Self {
        var changes = Self()
        let held = "SELECT purchase_date FROM transactions WHERE transaction_id = \(statements.dialect.placeholder(1))"
        for row in transactions {
            let heldRow = try await statements.run(held, [.text(row.transactionID)]).first
            let stored = heldRow?.first?.integer
            if row.purchaseDate == nil || (heldRow != nil && stored == nil) { changes.undated.insert(row.originalTransactionID) }
            for date in [row.purchaseDate, stored].compactMap({ $0 }) {
                changes.earliestPurchase[row.originalTransactionID] = min(date, changes.earliestPurchase[row.originalTransactionID] ?? date)
            }
        }
        return changes
    }
}
