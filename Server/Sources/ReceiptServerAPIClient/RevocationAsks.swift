import NIOCore
import ReceiptCore

/// The OCSP asks under way and the ones that failed lately, per certificate:
/// concurrent verifications of one chain share one request, and a responder that
/// just failed is not asked again for `failureMemorySeconds` (each JWS of a flood
/// would otherwise cost one request each, and a hanging responder one timeout each).
actor RevocationAsks {
    typealias Outcome = RevocationTransport.Outcome

    private var underWay: [String: Task<Outcome, Never>] = [:]
    private var failedAt: [String: (monotonicSeconds: Int64, outcome: Outcome)] = [:]
    let failureMemorySeconds: Int64
    /// Failures remembered at once at the most; the oldest are forgotten first.
    static let maxRemembered = 4096

    init(failureMemorySeconds: Int64) {
        self.failureMemorySeconds = failureMemorySeconds
    }

    /// The outcome of asking about `query`: a failure remembered, the ask already
    /// under way, or a new ask made by `ask`.
    func outcome(of query: RevocationQuery, ask: @escaping @Sendable () async -> Outcome) async -> Outcome {
        let key = query.certificateID
        let now = Self.monotonicSeconds()
        if let failed = failedAt[key] {
            if now - failed.monotonicSeconds < failureMemorySeconds { return failed.outcome }
            failedAt[key] = nil
        }
        if let running = underWay[key] { return await running.value }
        let task = Task { await ask() }
        underWay[key] = task
        let outcome = await task.value
        underWay[key] = nil
        if case .accepted = outcome { return outcome }
        if failedAt.count >= Self.maxRemembered, let oldest = failedAt.min(by: { $0.value.monotonicSeconds < $1.value.monotonicSeconds }) {
            failedAt[oldest.key] = nil
        }
        failedAt[key] = (now, outcome)
        return outcome
    }

    static func monotonicSeconds() -> Int64 { Int64(NIODeadline.now().uptimeNanoseconds / 1_000_000_000) }
}
