import ReceiptCore

/// When an attempt that can succeed later is tried again: the first retry after
/// `initialBackoffMilliseconds`, each next one twice as late, up to `maxBackoffMilliseconds`,
/// each drawn at random between half and all of it (jitter), so that receivers coming back are
/// not hit by every server at once.
public struct RetryPolicy: Sendable {
    public var initialBackoffMilliseconds: Int64 = 5_000
    public var maxBackoffMilliseconds: Int64 = 3_600_000

    public init() {}

    /// When to try again after attempt `attempt` (1 for the first) failed, with `random` in 0..<1.
    func nextAttempt(after attempt: Int, at now: Int64, random: Double) -> Int64 {
        let doubled = initialBackoffMilliseconds.multipliedReportingOverflow(by: Int64(1) << Int64(min(max(attempt, 1) - 1, 40)))
        let delay = doubled.overflow ? maxBackoffMilliseconds : min(doubled.partialValue, maxBackoffMilliseconds)
        let (next, overflow) = now.addingReportingOverflow(Int64(Double(delay) * (0.5 + random / 2)))
        return overflow ? .max : next
    }

    /// The next attempt when it comes no later than `deadline`; nil when it would come after
    /// (the item is then over: failed or expired, as its queue says).
    func nextAttempt(after attempt: Int, at now: Int64, until deadline: Int64, random: Double) -> Int64? {
        let next = nextAttempt(after: attempt, at: now, random: random)
        return next <= deadline ? next : nil
    }
}

/// A queue kept in one table of the store, shared by every server on it: an item is due when it
/// is pending, its next attempt has come and no lease holds it. A claim leases due items and
/// counts their attempt in one statement (several servers claim apart: PostgreSQL skips rows
/// another claim locked); a finish stores the attempt's state, next time and outcome and ends
/// the lease; a server that dies leaves its leases to end by themselves. The instants are
/// arguments: the caller's clock decides (a test's is fixed).
///
/// The webhook outbox (`deliveries`, claimed per endpoint, each subscription's events in order)
/// and the consumption outbox (`consumption_answers`, Apple's deadline first) are its two queues.
struct LeasedQueue: Sendable {
    let table: String
    /// The columns naming one item.
    let key: [String]
    /// Which due items are claimed first: an ORDER BY over `candidate`.
    let order: String

    static let deliveries = LeasedQueue(table: "deliveries", key: ["event_sequence", "endpoint"], order: "candidate.event_sequence")
    static let consumptionAnswers = LeasedQueue(table: "consumption_answers", key: ["transaction_id"], order: "candidate.deadline")

    /// The first placeholder free for a claim's `condition` (1 is now, 2 the lease's end).
    static let firstConditionPlaceholder = 3

    /// Leases up to `limit` due items for `leaseMilliseconds` and counts the attempt, in one
    /// statement; returns `returning` (expressions over the table's row, named plainly) of each,
    /// in no particular order. `condition`: more on `candidate`, its placeholders from
    /// `firstConditionPlaceholder`, bound to `binds`. `firstAttemptsOnly`: only items never attempted.
    func claim(returning: String, where condition: String? = nil, binds: [StoreValue] = [], firstAttemptsOnly: Bool = false,
               limit: Int, leaseMilliseconds: Int64, on statements: some StoreStatements, at now: Int64) async throws -> [[StoreValue]] {
        let d = statements.dialect
        // Never attempted is read from its own index (`|| ''` makes the state no index key): the due
        // index would walk every retry of a dead receiver's backlog to find the few never tried.
        let due = firstAttemptsOnly ? "candidate.state || '' = \(DeliveryState.pending.sql) AND candidate.attempts = 0"
            : "candidate.state = \(DeliveryState.pending.sql)"
        let keys = key.joined(separator: ", ")
        let (leaseEnd, overflow) = now.addingReportingOverflow(leaseMilliseconds)
        return try await statements.run("""
            UPDATE \(table) SET lease_until = \(d.placeholder(2)), attempts = attempts + 1
            WHERE (\(keys)) IN (SELECT \(key.map { "candidate.\($0)" }.joined(separator: ", ")) FROM \(table) AS candidate
              WHERE \(due) AND candidate.next_attempt_at <= \(d.placeholder(1)) AND candidate.lease_until <= \(d.placeholder(1))
              \(condition.map { "AND \($0)" } ?? "")
              ORDER BY \(order) LIMIT \(max(1, limit))\(d.skipLocked))
            RETURNING \(returning)
            """, [.integer(now), .integer(overflow ? .max : leaseEnd)] + binds)
    }

    /// Stores how an attempt on the item `keyValues` went and ends its lease: its `state`, when it is
    /// due again (`next`, for pending), the outcome `receipt events show` and the JSON show, and
    /// `also` (more columns of the table).
    func finish(_ keyValues: [StoreValue], state: DeliveryState, next: Int64, outcome: String,
                also: [(column: String, value: StoreValue)] = [], on statements: some StoreStatements) async throws {
        let d = statements.dialect
        let set = (["state", "next_attempt_at", "last_outcome"] + also.map(\.column)).enumerated().map {
            "\($0.element) = \(d.placeholder($0.offset + 1))"
        }
        let first = set.count + 1
        let match = key.enumerated().map { "\($0.element) = \(d.placeholder(first + $0.offset))" }
        _ = try await statements.run("""
            UPDATE \(table) SET \(set.joined(separator: ", ")), lease_until = 0 WHERE \(match.joined(separator: " AND "))
            """, [.text(state.rawValue), .integer(next), .text(outcome)] + also.map(\.value) + keyValues)
    }
}
