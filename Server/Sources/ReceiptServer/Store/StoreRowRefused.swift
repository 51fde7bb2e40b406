import PostgresNIO

/// The database refused a row it can never hold: PostgreSQL's SQLSTATE classes 54
/// (program limit exceeded: a value past what an index entry holds, about 2.7 kB) and 22
/// (data exception: a NUL character in text); or the server refused it itself (a date past
/// StoredFacts.storableDates, prices adding up past 64 bits). Sending the row again cannot succeed, so
/// the sender is told 400, not 503 (which Apple retries for days). Only a notification
/// signed under an anchor the operator added can carry such values: Apple's ids are short.
struct StoreRowRefused: Error, CustomStringConvertible {
    let description: String

    /// The refusal `error` is, when it is one.
    static func from(_ error: any Error) -> StoreRowRefused? {
        if let refused = error as? StoreRowRefused { return refused }  // refused before the database saw it
        if let transaction = error as? PostgresTransactionError {  // what the write's statements met, inside it
            return (transaction.closureError ?? transaction.commitError).flatMap(from)
        }
        guard let problem = error as? PSQLError, let state = problem.serverInfo?[.sqlState],
              state.hasPrefix("54") || state.hasPrefix("22") else { return nil }
        return StoreRowRefused(description: "\(problem.serverInfo?[.message] ?? "refused") (SQLSTATE \(state))")
    }
}
