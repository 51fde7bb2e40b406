@_spi(ReceiptInternal) import ReceiptCore

/// The answers to Apple's `CONSUMPTION_REQUEST`, kept until Apple took them: a request
/// stored with its notification (awaiting), an answer from the app or the operator's policy
/// (pending, with the body Apple's V2 call takes), then sent, failed (Apple refused it) or
/// expired (Apple's 12 hours passed). Written once for both databases over StoreStatements.
enum ConsumptionOutbox {
    static let requestType = "CONSUMPTION_REQUEST"
    static let columns = """
        transaction_id, original_transaction_id, product_id, requested_at, deadline, state, source, body, attempts, \
        next_attempt_at, last_outcome
        """

    /// A request arrived (in the notification's transaction): awaiting an answer. A new
    /// request for a transaction whose earlier one is over starts again.
    static func requested(_ transaction: StoredTransaction, at signed: Int64, on statements: some StoreStatements) async throws {
        let p = statements.dialect.placeholders(1...5)
        _ = try await statements.run("""
            INSERT INTO consumption_answers (transaction_id, original_transaction_id, product_id, requested_at, deadline, state,
              attempts, next_attempt_at, lease_until) VALUES (\(p[0]), \(p[1]), \(p[2]), \(p[3]), \(p[4]), \(DeliveryState.awaiting.sql), 0, 0, 0)
            ON CONFLICT (transaction_id) DO UPDATE SET requested_at = excluded.requested_at, deadline = excluded.deadline,
              state = CASE WHEN consumption_answers.state IN (\(DeliveryState.sent.sql), \(DeliveryState.failed.sql), \(DeliveryState.expired.sql)) THEN \(DeliveryState.awaiting.sql)
                ELSE consumption_answers.state END
            WHERE excluded.requested_at > consumption_answers.requested_at
            """, [.text(transaction.transactionID), .text(transaction.originalTransactionID), StoreValue(transaction.productID),
                  .integer(signed), .integer(signed + ConsumptionAnswer.deadlineMilliseconds)])
    }

    /// Why an answer was not taken.
    enum Refusal: Error, Equatable {
        /// Apple never asked about the transaction (no CONSUMPTION_REQUEST is stored for it).
        case notAsked
        /// The request was already answered (pending, sent, or refused by Apple).
        case answered
        /// Apple's 12 hours are over.
        case expired
    }

    /// An answer given (by the app: `source` app; by the policy: `policy`) to a stored request
    /// still awaiting one within Apple's 12 hours: due now. Anything else is refused, so that
    /// nothing is sent that Apple did not ask for, nor twice, nor late. A refusal is returned,
    /// not thrown: a database's transaction wraps what its work throws.
    static func answer(transactionID: String, body: String, source: String, on statements: some StoreStatements,
                       at now: Int64) async throws -> Result<ConsumptionRow, Refusal> {
        let p = statements.dialect.placeholders(1...4)
        let written = try await statements.run("""
            UPDATE consumption_answers SET state = \(DeliveryState.pending.sql), source = \(p[0]), body = \(p[1]), attempts = 0,
              next_attempt_at = \(p[2]), last_outcome = NULL
            WHERE transaction_id = \(p[3]) AND state = \(DeliveryState.awaiting.sql) AND deadline > \(p[2])
            RETURNING transaction_id
            """, [.text(source), .text(body), .integer(now), .text(transactionID)])
        guard let row = try await row(transactionID: transactionID, on: statements) else { return .failure(.notAsked) }
        guard written.isEmpty else { return .success(row) }
        return .failure(row.state == .awaiting || row.state == .expired ? .expired : .answered)
    }

    static func row(transactionID: String, on statements: some StoreStatements) async throws -> ConsumptionRow? {
        try await statements.run("SELECT \(columns) FROM consumption_answers WHERE transaction_id = \(statements.dialect.placeholder(1))",
                                 [.text(transactionID)]).first.flatMap(ConsumptionRow.init(row:))
    }

    /// Requests awaiting an answer, at most `limit`: for the policy to answer.
    static func awaiting(limit: Int, on statements: some StoreStatements, at now: Int64) async throws -> [ConsumptionRow] {
        try await statements.run("""
            SELECT \(columns) FROM consumption_answers WHERE state = \(DeliveryState.awaiting.sql) AND deadline > \(statements.dialect.placeholder(1))
            ORDER BY requested_at LIMIT \(max(1, limit))
            """, [.integer(now)]).compactMap(ConsumptionRow.init(row:))
    }

    /// Leases up to `limit` answers due now for `leaseMilliseconds`, counting the attempt
    /// (LeasedQueue.consumptionAnswers): Apple's deadline first.
    static func claim(limit: Int, leaseMilliseconds: Int64, on statements: some StoreStatements, at now: Int64) async throws
        -> [ConsumptionRow] {
        try await LeasedQueue.consumptionAnswers.claim(returning: columns, limit: limit, leaseMilliseconds: leaseMilliseconds,
                                                       on: statements, at: now)
            .compactMap(ConsumptionRow.init(row:)).sorted { ($0.deadline, $0.transactionID) < ($1.deadline, $1.transactionID) }
    }

    /// How an attempt went: `state` sent, pending (due again at `next`), failed or expired.
    static func finish(transactionID: String, state: DeliveryState, next: Int64, outcome: String,
                       on statements: some StoreStatements) async throws {
        try await LeasedQueue.consumptionAnswers.finish([.text(transactionID)], state: state, next: next, outcome: outcome, on: statements)
    }
}

/// One request's answer as the store keeps it.
struct ConsumptionRow: Sendable {
    let transactionID: String
    let originalTransactionID: String?
    let productID: String?
    let requestedAt: Int64
    let deadline: Int64
    let state: DeliveryState
    let source: String?
    let body: String?
    let attempts: Int64
    let nextAttemptAt: Int64
    let lastOutcome: String?

    init?(row: [StoreValue]) {
        guard row.count == 11, let id = row[0].text, let requested = row[3].integer, let deadline = row[4].integer,
              let state = row[5].text.flatMap(DeliveryState.init(rawValue:)) else { return nil }
        (transactionID, originalTransactionID, productID, requestedAt, self.deadline, self.state) =
            (id, row[1].text, row[2].text, requested, deadline, state)
        (source, body, attempts, nextAttemptAt, lastOutcome) =
            (row[6].text, row[7].text, row[8].integer ?? 0, row[9].integer ?? 0, row[10].text)
    }

    /// As `GET /v1/consumption/{transactionId}` answers.
    var json: [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.string("transaction_id", transactionID)
        if let originalTransactionID { writer.string("original_transaction_id", originalTransactionID) }
        if let productID { writer.string("product_id", productID) }
        writer.string("state", state.rawValue)
        if let source { writer.string("source", source) }
        writer.number("requested_at_ms", requestedAt)
        writer.number("deadline_ms", deadline)
        writer.number("attempts", attempts)
        if let lastOutcome { writer.string("last_outcome", lastOutcome) }
        if let body { writer.raw("body", Array(body.utf8)) }
        writer.endObject()
        return writer.bytes
    }
}
