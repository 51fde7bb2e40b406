import ReceiptCore
import ReceiptServerAPIClient

extension RevocationTransport {
    /// Asks OCSP for a payload whose chain verified but lacked fresh answers (a `revocationPending`
    /// of the core's endpoints), each outcome counted under `reason`; true when an answer was
    /// taken, so that the caller judges the request again.
    func askedAnew(about payload: SignedPayload, for verifier: ReceiptVerifier, metrics: ServerMetrics, reason: String) async -> Bool {
        let outcomes = await ask(about: payload, for: verifier)
        for outcome in outcomes { metrics.recordRevocation(outcome: outcome.label, reason: reason) }
        return outcomes.contains { if case .accepted = $0 { true } else { false } }
    }
}
