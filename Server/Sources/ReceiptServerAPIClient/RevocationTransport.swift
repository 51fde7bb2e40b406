import AsyncHTTPClient
import NIOCore
import ReceiptCore

/// The OCSP loop of ReceiptCore's revocation step over AsyncHTTPClient: posts the
/// queries a verifier names and hands back the answers, which the verifier checks
/// and caches. Only a transport: what to ask and what an answer means are the core's.
public struct RevocationTransport: Sendable {
    public enum Outcome: Sendable {
        /// A valid answer, kept by the verifier: "good", "revoked" or "unknown".
        case accepted(String)
        /// An answer that is not a valid OCSP answer (never counts as good).
        case refused(ReceiptError)
        /// No answer (down, slow, unreachable).
        case unanswered(String)

        /// For metrics: good, revoked, unknown, bad_answer, no_answer.
        public var label: String {
            switch self {
            case .accepted(let status): status
            case .refused: "bad_answer"
            case .unanswered: "no_answer"
            }
        }
    }

    public let httpClient: HTTPClient
    public let timeout: TimeAmount
    private let asks: RevocationAsks

    /// `timeout` bounds each whole exchange, body included; `httpClient` should follow
    /// no redirect (the default, BoundedExchange.noRedirects).
    /// A failed ask (no answer, or not a valid one) is not made again for the
    /// same certificate within `failureMemorySeconds`; concurrent asks share one request.
    public init(httpClient: HTTPClient = BoundedExchange.noRedirects, timeout: TimeAmount = .seconds(5),
                failureMemorySeconds: Int64 = 30) {
        self.httpClient = httpClient
        self.timeout = timeout
        asks = RevocationAsks(failureMemorySeconds: failureMemorySeconds)
    }

    /// Asks every query at once; the verifier keeps each valid answer.
    public func ask(_ queries: [RevocationQuery], for verifier: ReceiptVerifier) async -> [Outcome] {
        await withTaskGroup(of: (Int, Outcome).self) { group in
            for (index, query) in queries.enumerated() {
                group.addTask { (index, await self.asks.outcome(of: query) { await self.ask(query, for: verifier) }) }
            }
            var outcomes = [Outcome](repeating: .unanswered("not asked"), count: queries.count)
            for await (index, outcome) in group { outcomes[index] = outcome }
            return outcomes
        }
    }

    /// The questions a JWS still needs, asked; none for a warm or untrusted chain.
    public func ask(about payload: SignedPayload, for verifier: ReceiptVerifier) async -> [Outcome] {
        guard let queries = try? verifier.revocationQueries(for: payload), !queries.isEmpty else { return [] }
        return await ask(queries, for: verifier)
    }

    private func ask(_ query: RevocationQuery, for verifier: ReceiptVerifier) async -> Outcome {
        var request = HTTPClientRequest(url: query.url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/ocsp-request")
        request.body = .bytes(ByteBuffer(bytes: query.request))
        let status: Int, body: [UInt8]
        do {
            let answer = try await BoundedExchange.send(request, with: httpClient, timeout: timeout, maxBytes: 1 << 20)
            status = answer.status
            body = answer.body
        } catch {
            return .unanswered("\(query.url): \(BoundedExchange.reason(error))")
        }
        do throws(ReceiptError) {
            return .accepted(try verifier.acceptRevocationAnswer(query, httpStatus: status, body: body))
        } catch {
            return .refused(error)
        }
    }
}
