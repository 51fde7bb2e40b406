import ReceiptCore
import SQLiteNIO

/// One of the SQLite store's point reads (one subscription, one page of an account, one
/// consent): its statement and binds, how a row is read, and the answer its rows make.
/// The same read is made by the quick reads (`atOnce`, StorePointReads) or, when they hand
/// it on, by one of sqlite-nio's readers (SQLiteSubscriptionStore.read).
struct SQLitePointRead<Row, Answer: Sendable> {
    let sql: String
    let binds: [StoreValue]
    /// A row's value, or nil to leave the row out.
    let row: (any PointReadRow) -> Row?
    let answer: ([Row]) -> Answer

    /// The answer when the quick reads made it, nil when they handed it on (StorePointReads
    /// then makes it `later`).
    func atOnce(_ quick: SQLiteQuickReads) throws -> Answer? {
        var rows: [Row] = []
        guard try quick.read(sql, binds, row: { if let made = row($0) { rows.append(made) } }) else { return nil }
        return answer(rows)
    }

    var pooledBinds: [SQLiteData] { binds.map(\.sqliteData) }
}

extension SQLitePointRead where Row == StoredSubscriptions.Row, Answer == StoredSubscriptions {
    static func subscriptions(_ originalTransactionIDs: [String], transactionsEach: Int) -> Self {
        let list = "IN (" + originalTransactionIDs.indices.map { "?\($0 + 1)" }.joined(separator: ", ") + ")"
        return Self(sql: StoreSchema.subscriptionsQuery(list, each: transactionsEach, one: originalTransactionIDs.count == 1), binds: originalTransactionIDs.map { .text($0) },
                    row: { row in
                        guard let kind = row.integer(0), let signed = row.integer(1), let jws = row.text(2) else { return nil }
                        return StoredSubscriptions.Row(kind: kind, signedDate: signed, jws: jws)
                    },
                    answer: StoredSubscriptions.init(rows:))
    }
}

extension SQLitePointRead where Row == (Int64, String, String), Answer == StoredPage {
    static func accountPage(_ appAccountToken: String, after cursor: StoreCursor?, limit: Int) -> Self {
        var binds: [StoreValue] = [.text(appAccountToken.lowercased())]
        if let cursor { binds += [.integer(cursor.signedDate), .text(cursor.transactionID)] }
        return Self(sql: StoreSchema.accountPageQuery(placeholders: SQLiteSubscriptionStore.placeholders, afterCursor: cursor != nil,
                                                      limit: limit),
                    binds: binds, row: { row in (row.integer(0) ?? 0, row.text(1) ?? "", row.text(2) ?? "") },
                    answer: { StoredPage.of($0, limit: limit) })
    }
}

extension SQLitePointRead where Row == StoredConsentRescission, Answer == StoredConsentRescission? {
    static func consentRescission(_ appTransactionID: String) -> Self {
        Self(sql: StoreSchema.consentRescissionQuery + "?1", binds: [.text(appTransactionID)],
             row: { row in
                 guard let uuid = row.text(0), let signed = row.integer(1), let jws = row.text(2) else { return nil }
                 return StoredConsentRescission(storedJWS: jws, notificationUUID: uuid, signedDate: signed)
             },
             answer: { $0.first })
    }
}

/// A row of sqlite-nio's, read by position as a quick read's row is.
extension SQLiteRow: PointReadRow {
    func text(_ column: Int32) -> String? { columns[Int(column)].data.string }
    func integer(_ column: Int32) -> Int64? {
        if case .integer(let value) = columns[Int(column)].data { Int64(value) } else { nil }
    }
}
