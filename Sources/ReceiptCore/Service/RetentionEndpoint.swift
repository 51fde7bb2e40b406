import Synchronization

/// Retention Messaging's realtime requests as a server receives them: Apple's body
/// `{"signedPayload": "<JWS>"}` in, verified as a realtime request (its kind from the
/// endpoint, as Apple's `verify_and_decode_realtime_request`: anchor, app Apple id,
/// environment, revocation), and Apple's realtime response out (`RealtimeResponseBody`:
/// `message`, `alternateProduct` or `promotionalOffer`), chosen by RetentionRules for the
/// request's product and locale. Apple waits about 700 ms: an answer is the verification,
/// a look-up among the rules, and for an offer one signature; answers that do not depend
/// on the request are rendered once, when the endpoint is made. A request is answered only
/// when signed within `freshness` of now, and a `requestIdentifier` answered within that
/// window gets its first answer again (the same offer signature), not a new one.
///
/// Safe to share across threads (its memory of answers is locked).
public struct RetentionEndpoint: Sendable {
    public let verifier: ReceiptVerifier
    public let rules: RetentionRules
    /// The in-app purchase key that signs promotional offers; required when a rule offers one.
    let offerCredentials: ServerAPICredentials?
    /// The bytes of each answer that is the same for every request, by rule (nil: signed per request).
    private let rendered: [RetentionRules.Answer: [UInt8]]
    /// The answers given in the last two windows, by request identifier.
    private let answered = RecentAnswers()
    /// How far a request's signedDate may be from now, either way.
    public static let freshnessMilliseconds: Int64 = 5 * 60_000

    public init(verifier: ReceiptVerifier, rules: RetentionRules, offerCredentials: ServerAPICredentials?) throws(ReceiptError) {
        guard offerCredentials != nil || !rules.signsOffers else {
            throw ReceiptError(.invalidArgument, "the retention rules offer promotional offers: the in-app purchase key that "
                               + "signs them is needed")
        }
        self.verifier = verifier
        self.rules = rules
        self.offerCredentials = offerCredentials
        var rendered: [RetentionRules.Answer: [UInt8]] = [:]
        for answer in rules.rules.map(\.answer) + [rules.defaultAnswer].compactMap({ $0 }) {
            if case .promotionalOffer = answer { continue }
            rendered[answer] = Self.render(answer, offerSignature: nil)
        }
        self.rendered = rendered
    }

    /// What answering a body gave: the response body, or why the request is refused
    /// (the server answers 400 with the refusal, and Apple shows its default).
    public struct Reply: Sendable {
        public let body: [UInt8]
        public let refusal: ReceiptError?
        /// As VerdictEndpoint.Answer's: a request whose signature verified and whose revocation
        /// step lacked OCSP answers; a server asks them and answers again when the request was
        /// refused for it (revocation hard), and asks them for the next request when it was
        /// answered anyway (soft), within Apple's 700 ms either way.
        public var revocationPending: SignedPayload? = nil
    }

    public func answer(body: [UInt8], at now: Int64 = ReceiptClock.systemNow()) -> Reply {
        let request: SignedPayload
        let pending: SignedPayload?
        do throws(ReceiptError) {
            let token = try NotificationEndpoint.signedPayload(in: body)
            let (payload, result) = try verifier.verify(jws: token, as: .realtimeRequest)
            pending = RevocationPolicy.wantsAnswers(result) ? payload : nil
            if let failure = result.firstFailure {
                return Reply(body: NotificationEndpoint.refusal(failure), refusal: failure, revocationPending: pending)
            }
            guard let signed = payload.date("signedDate"),
                  (now.clampedAdding(-Self.freshnessMilliseconds)...now.clampedAdding(Self.freshnessMilliseconds)).contains(signed) else {
                throw ReceiptError(.badField, "the realtime request's signedDate is more than 5 minutes from now (or absent): "
                                   + "only a fresh request is answered")
            }
            request = payload
        } catch {
            return Reply(body: NotificationEndpoint.refusal(error), refusal: error)
        }
        let identifier = request.string("requestIdentifier")
        // Answered without fresh OCSP answers (revocation soft): the server asks them for the next request.
        if let identifier, let earlier = answered.answer(to: identifier, at: now) {
            return Reply(body: earlier, refusal: nil, revocationPending: pending)
        }
        var reply = fresh(request)
        if let identifier, reply.refusal == nil {
            answered.remember(reply.body, for: identifier, at: now, keptFor: 2 * Self.freshnessMilliseconds)
        }
        reply.revocationPending = pending
        return reply
    }

    private func fresh(_ request: SignedPayload) -> Reply {
        guard let chosen = rules.answer(productID: request.productID, locale: request.string("userLocale")) else {
            return Reply(body: Array("{}".utf8), refusal: nil)
        }
        if let bytes = rendered[chosen] { return Reply(body: bytes, refusal: nil) }
        do throws(ReceiptError) {
            return Reply(body: Self.render(chosen, offerSignature: try offerSignature(for: chosen, request: request)),
                         refusal: nil)
        } catch {
            return Reply(body: NotificationEndpoint.refusal(error), refusal: error)
        }
    }

    /// A promotional offer V2 JWS for the customer: the offer's product (else the one
    /// the request is about) and the customer's original transaction id.
    private func offerSignature(for answer: RetentionRules.Answer, request: SignedPayload) throws(ReceiptError) -> String? {
        guard case .promotionalOffer(_, let offer, let product) = answer, let offerCredentials else { return nil }
        guard let productID = product ?? request.productID else {
            throw ReceiptError(.badField, "the realtime request names no productId, and the offer's rule none either")
        }
        return try SignedRequestCreators.promotionalOfferV2(offerCredentials, productID: productID, offerIdentifier: offer,
                                                            transactionID: request.originalTransactionID)
    }

    /// Apple's RealtimeResponseBody for `answer`.
    static func render(_ answer: RetentionRules.Answer, offerSignature: String?) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        switch answer {
        case .message(let message):
            writer.beginObject("message")
            writer.string("messageIdentifier", message)
        case .alternateProduct(let message, let product):
            writer.beginObject("alternateProduct")
            writer.string("messageIdentifier", message)
            writer.string("productId", product)
        case .promotionalOffer(let message, _, _):
            writer.beginObject("promotionalOffer")
            writer.string("messageIdentifier", message)
            writer.string("promotionalOfferSignatureV2", offerSignature ?? "")
        }
        writer.endObject()
        writer.endObject()
        return writer.bytes
    }
}

/// The answers a realtime endpoint gave, by request identifier, each until it is too old to
/// be asked again (a request older than the freshness window is refused before it is
/// looked up). At most `capacity` are kept: past it, expired ones go first, and when none
/// has, a new answer is not kept (it is still given).
final class RecentAnswers: Sendable {
    static let capacity = 20_000
    private let answers = Mutex<[String: (until: Int64, body: [UInt8])]>([:])

    func answer(to identifier: String, at now: Int64) -> [UInt8]? {
        answers.withLock { answers in answers[identifier].flatMap { $0.until > now ? $0.body : nil } }
    }

    func remember(_ body: [UInt8], for identifier: String, at now: Int64, keptFor milliseconds: Int64) {
        answers.withLock { answers in
            if answers.count >= Self.capacity { answers = answers.filter { $0.value.until > now } }
            guard answers.count < Self.capacity, identifier.utf8.count <= 256 else { return }
            answers[identifier] = (now.clampedAdding(milliseconds), body)
        }
    }
}
