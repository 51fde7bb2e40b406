import Logging
import ReceiptCore
import ReceiptServerAPIClient

/// The in-process half of `make bench`'s store rows: what `receipt serve` does for one
/// GET /v1/subscriptions/{id} and one POST /verifyReceipt merged with the store, through
/// the same StoreResponder and endpoints, without HTTP. The bench adds the framework's
/// empty request under load to these to get each read's composition floor.
public enum StoreBench {
    /// Median nanoseconds per call, by name: `subscription_read` and, given a body,
    /// `verify_receipt_merged` (the production endpoint, or sandbox when it answers 21007).
    /// Calls run `concurrency` at a time, as a server's requests do: a store read mostly
    /// waits (on SQLite's threads, on PostgreSQL's socket), so one at a time would time
    /// the wait rather than the work. The figure is elapsed time over calls made: the
    /// in-process throughput over every core.
    public static func run(location: StoreLocation, verifier: ReceiptVerifier, originalTransactionID: String,
                           verifyReceiptBody: [UInt8]?, samples: Int, calls: Int = 200, concurrency: Int = 16,
                           logger: Logger) async throws -> [(String, Int64)] {
        // As the server makes it: each operation under its deadline (DeadlineStore).
        let store = DeadlineStore(inner: try await makeSubscriptionStore(location: location, logger: logger),
                                  seconds: ServerSettings.Defaults.storeOperationTimeoutSeconds)
        return try await withThrowingTaskGroup(of: [(String, Int64)]?.self) { tasks in
            tasks.addTask { await store.run(); return nil }
            defer { tasks.cancelAll() }
            return try await store.closing {
                try await store.migrate()
                let stored = StoreResponder(store: store, reads: StorePointReads(store: store), notifications: NotificationEndpoint(verifier: verifier),
                                            metrics: ServerMetrics(), catchUp: nil, revocation: RevocationTransport(timeout: .seconds(5)), wake: nil,
                                            consumptionWake: nil)
                var figures: [(String, Int64)] = []
                let (status, _) = try await stored.subscription(originalTransactionID, mayLookUp: false, logger: logger).answer()
                guard status == .ok else { throw ReceiptError(.absent, "the store knows no subscription \(originalTransactionID)") }
                figures.append(("subscription_read", try await BenchTiming.median(samples, calls, concurrency) {
                    // As ReceiptResponder: the reply made at once, or its rest awaited.
                    if case .later(let rest) = try stored.subscription(originalTransactionID, mayLookUp: false, logger: logger) {
                        _ = try await rest()
                    }
                }))
                if let body = verifyReceiptBody {
                    let production = VerifyReceiptEndpoint(environment: .production, verifier: verifier)
                    let endpoint = production.answer(toBody: body).status == LocalVerifyReceipt.sandboxReceiptSentToProduction
                        ? VerifyReceiptEndpoint(environment: .sandbox, verifier: verifier) : production
                    let answer = endpoint.answer(try await merged(endpoint, body, stored))
                    guard answer.status == 0 else { throw ReceiptError(.invalidArgument, "the receipt's answer is status \(answer.status)") }
                    figures.append(("verify_receipt_merged", try await BenchTiming.median(samples, calls, concurrency) {
                        _ = try await merged(endpoint, body, stored)
                    }))
                }
                return figures
            }
        }
    }

    /// What the responder does for one merged POST /verifyReceipt.
    private static func merged(_ endpoint: VerifyReceiptEndpoint, _ body: [UInt8], _ stored: StoreResponder) async throws
        -> VerifyReceiptEndpoint.PreparedRequest {
        let prepared = endpoint.prepare(body: body)
        let known = switch try stored.known(prepared.subscriptionIDs) {
        case .now(let answer): answer
        case .later(let rest): try await rest()
        }
        _ = endpoint.answer(prepared, known: known)
        return prepared
    }
}
