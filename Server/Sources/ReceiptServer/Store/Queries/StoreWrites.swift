import ReceiptCore

/// The writes of a store, once for both databases (StoreStatements), each inside the
/// caller's transaction: the rows the core made, and the event of what they changed
/// (EventOutbox), so that a change and its event are committed together or not at all.
enum StoreWrites {
    /// Stores a notification and what it carries; false when its UUID was stored before.
    /// Its row is inserted first, so that of two servers given the same notification one
    /// stores it and the other waits on that row, then finds it there. Its event is made
    /// whatever its rows changed.
    static func record(_ notification: ReceivedNotification, on statements: some StoreStatements) async throws -> Bool {
        let d = statements.dialect
        let now = ReceiptClock.systemNow()
        let p = d.placeholders(1...6)
        let inserted = try await statements.run(StoreSchema.insertNotification(placeholders: p) + " RETURNING notification_uuid", [
            .text(notification.notificationUUID), .text(notification.notificationType), StoreValue(notification.subtype),
            .integer(notification.signedDate), StoreValue(notification.originalTransactionID), .integer(now),
        ])
        guard !inserted.isEmpty else { return false }
        try await lockOrder(of: orderingKey(notification), on: statements)
        let transactions = notification.transaction.map { [$0] } ?? []
        let renewalInfos = notification.renewalInfo.map { [$0] } ?? []
        _ = try await write(transactions, renewalInfos, on: statements)
        if let rescission = notification.consentRescission {
            _ = try await statements.run(StoreSchema.upsertConsentRescission(d), rescission.columnValues.map(StoreValue.init))
        }
        if notification.notificationType == ConsumptionOutbox.requestType, let transaction = notification.transaction {
            try await ConsumptionOutbox.requested(transaction, at: notification.signedDate, on: statements)
        }
        // Every notification new to the store is news to the app, whether or not its rows change
        // any (a CONSUMPTION_REQUEST for a purchase held gives 12 hours to answer; REFUND_DECLINED,
        // TEST): one event per notification UUID, none for a duplicate (returned above).
        try await EventOutbox.append(.notification(notification), originalTransactionID: notification.originalTransactionID,
                                     appAccountToken: notification.transaction?.appAccountToken, on: statements, at: now)
        return true
    }

    /// Stores notifications in the caller's transaction (GroupCommit's batch), each in a
    /// savepoint: one that fails is rolled back alone and answered with its error; a failure
    /// of the rollback itself (the connection gone) fails the whole transaction. Only SQLite
    /// batches, and its writer is alone: a dialect that locked rows would have to take the
    /// batch's turns (lockOrder) first, in one order, so that two batches never wait in a cycle.
    static func record(batch notifications: [ReceivedNotification], on statements: some StoreStatements) async throws
        -> [Result<Bool, any Error>] {
        var answers: [Result<Bool, any Error>] = []
        for notification in notifications {
            _ = try await statements.run("SAVEPOINT notification", [])
            do {
                answers.append(.success(try await record(notification, on: statements)))
            } catch {
                _ = try await statements.run("ROLLBACK TO SAVEPOINT notification", [])
                answers.append(.failure(error))
            }
            _ = try await statements.run("RELEASE SAVEPOINT notification", [])
        }
        return answers
    }

    /// The key a notification's changes take turns on (lockOrder): its subscription, else the
    /// app transaction its consent names, else itself.
    private static func orderingKey(_ notification: ReceivedNotification) -> String {
        notification.originalTransactionID ?? notification.consentRescission?.appTransactionID ?? notification.notificationUUID
    }

    /// Stores rows learnt from the App Store Server API, and an event for each
    /// subscription whose rows changed.
    static func record(transactions: [StoredTransaction], renewalInfos: [StoredRenewalInfo],
                       on statements: some StoreStatements) async throws {
        for id in Set(transactions.map(\.originalTransactionID) + renewalInfos.map(\.originalTransactionID)).sorted() {
            try await lockOrder(of: id, on: statements)
        }
        let written = try await write(transactions, renewalInfos, on: statements)
        guard !written.transactions.isEmpty || !written.renewalInfos.isEmpty else { return }
        try await EventOutbox.appendServerAPIChanges(transactions: written.transactions, renewalInfos: written.renewalInfos,
                                                     on: statements, at: ReceiptClock.systemNow())
    }

    /// The rows each upsert wrote (a copy older than the one held writes nothing); the
    /// summaries of the subscriptions they changed made again, and the flows' counts changed
    /// by what the periods they may change (PeriodChanges) count after the write less what they
    /// counted before it (FlowDays), the summaries' counts per expiry day likewise (ExpiryDays),
    /// and the subscriptions active per midnight (ActiveDays).
    private static func write(_ transactions: [StoredTransaction], _ renewalInfos: [StoredRenewalInfo],
                              on statements: some StoreStatements) async throws
        -> (transactions: [StoredTransaction], renewalInfos: [StoredRenewalInfo]) {
        let d = statements.dialect
        let facts = transactions.map { ($0.facts, StoredFacts.transactionColumns) }
            + renewalInfos.map { ($0.facts, StoredFacts.renewalInfoColumns) }
        if let column = facts.lazy.compactMap({ StoredFacts.unstorableDate(in: $0, of: $1) }).first {
            throw StoreRowRefused(description: "its \(column) is more than 2^53 ms from 1970, which no App Store signs")
        }
        var written: (transactions: [StoredTransaction], renewalInfos: [StoredRenewalInfo]) = ([], [])
        let summarized = Set(transactions.map(\.originalTransactionID) + renewalInfos.map(\.originalTransactionID))
        let periods = try await PeriodChanges.of(transactions, on: statements)
        let flowsBefore = try await FlowDays.counts(of: periods, on: statements)
        let expiriesBefore = try await ExpiryDays.counts(of: summarized, on: statements)
        let withTransactions = Set(transactions.map(\.originalTransactionID))
        let activeBefore = try await ActiveDays.changes(of: withTransactions, periods: periods, on: statements)
        for row in transactions {
            let returned = try await statements.run(StoreSchema.upsertTransaction(d) + " RETURNING transaction_id",
                                                    row.columnValues.map(StoreValue.init))
            if !returned.isEmpty { written.transactions.append(row) }
        }
        for row in renewalInfos {
            let returned = try await statements.run(StoreSchema.upsertRenewalInfo(d) + " RETURNING original_transaction_id",
                                                    row.columnValues.map(StoreValue.init))
            if !returned.isEmpty { written.renewalInfos.append(row) }
        }
        try await SubscriptionSummaries.refresh(transactions: written.transactions,
                                                renewalInfosOf: Set(written.renewalInfos.map(\.originalTransactionID)),
                                                periods: periods, on: statements)
        if !written.transactions.isEmpty {
            try await FlowDays.recordChange(of: periods, before: flowsBefore, on: statements)
            try await ActiveDays.recordChange(of: withTransactions, periods: periods, before: activeBefore, on: statements)
        }
        if !written.transactions.isEmpty || !written.renewalInfos.isEmpty {
            try await ExpiryDays.recordChange(of: summarized, before: expiriesBefore, on: statements)
        }
        return written
    }

    /// On PostgreSQL, changes to one subscription take turns until commit (a transaction
    /// advisory lock on its key), so that their events are numbered in commit order and a
    /// delivery never overtakes an earlier event that was still being written. SQLite
    /// writes one transaction at a time already.
    private static func lockOrder(of key: String, on statements: some StoreStatements) async throws {
        guard statements.dialect == .postgres else { return }
        _ = try await statements.run("SELECT 1 FROM (SELECT pg_advisory_xact_lock(hashtext($1))) AS locked", [.text(key)])
    }
}
