/// App Store Server Notifications V2 as a server receives them: Apple's body
/// `{"signedPayload": "<JWS>"}` in, a verified `ReceivedNotification` (what to store)
/// or a refusal out. The notification and every signed member it carries are verified
/// with the server's verifier and policy (anchor, bundle id, app Apple id,
/// environment, revocation). Everything `receipt serve` decides about a notification
/// is decided here; the server stores what this gives it and answers Apple.
///
/// Immutable and safe to share across threads.
public struct NotificationEndpoint: Sendable {
    public let verifier: ReceiptVerifier

    /// Apple's body is one member; any depth or count past this is not a notification.
    static let bodyLimits = JSONLimits(maxDepth: 2, maxValues: 16)

    public init(verifier: ReceiptVerifier) {
        self.verifier = verifier
    }

    /// What reading a body gave: the notification or why it is refused, and, with
    /// revocation on, the notification when its chain lacked fresh OCSP answers (a
    /// server asks them, ReceiptVerifier.revocationQueries, and reads the body again).
    public struct Reading: Sendable {
        public let notification: Result<ReceivedNotification, ReceiptError>
        public let revocationPending: SignedPayload?
    }

    /// A notification, or why it is refused: a body that is not Apple's object, a
    /// `signedPayload` that is not a readable JWS or not a notification, one whose
    /// verification fails (the failed step's status and detail, a nested member's
    /// named), or one without what a store keys it by.
    public func read(body: [UInt8]) -> Reading {
        let payload: SignedPayload
        do throws(ReceiptError) {
            payload = try SignedPayload.decode(try Self.signedPayload(in: body))
        } catch {
            return Reading(notification: .failure(error), revocationPending: nil)
        }
        let result = verifier.verify(jws: payload)
        // Nested members are signed by the same chain; their step fails by the same status.
        let pending = RevocationPolicy.wantsAnswers(result) || result.firstFailure?.status == .revocationUnknown
        do throws(ReceiptError) {
            return Reading(notification: .success(try ReceivedNotification(payload, verified: result)),
                           revocationPending: pending ? payload : nil)
        } catch {
            return Reading(notification: .failure(error), revocationPending: pending ? payload : nil)
        }
    }

    /// The JWS of Apple's body `{"signedPayload": "<JWS>"}` (notifications and realtime
    /// requests alike), or why the body is not that.
    static func signedPayload(in body: [UInt8]) throws(ReceiptError) -> String {
        let wrapping = "Apple posts {\"signedPayload\": \"<JWS>\"}: wrap it so"
        let document: JSONValue
        do throws(ReceiptError) {
            document = try body.withUnsafeBufferPointer { (bytes) throws(ReceiptError) in
                try JSONValue.parse(bytes, limits: Self.bodyLimits)
            }
        } catch {
            // A bare JWS posted as the body is the commonest mistake: say so, not where JSON broke.
            guard body.withUnsafeBufferPointer({ InputForm.looksLikeJWS($0) }) else { throw error }
            throw ReceiptError(error.status, "the body is a bare JWS; \(wrapping)")
        }
        guard case .object = document else {
            throw ReceiptError(.notAnObject, document.stringValue != nil ? "the body is a JSON string; \(wrapping)"
                                                                         : "the body is JSON but not an object")
        }
        guard let token = document["signedPayload"]?.stringValue else {
            throw ReceiptError(.badField, "the body has no \"signedPayload\" string")
        }
        return token
    }

    /// The body of a 200: `{"notificationUUID": …, "stored": true}`, or false for a
    /// notification stored before (Apple needs only the 200; people reading logs want more).
    public static func acknowledgement(_ notification: ReceivedNotification, stored: Bool) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.string("notificationUUID", notification.notificationUUID)
        writer.bool("stored", stored)
        writer.endObject()
        return writer.bytes
    }

    /// The body of a refusal by the store's endpoints: `{"status": name, "detail": …}`.
    public static func refusal(_ error: ReceiptError) -> [UInt8] { failure(error.status.name, error.detail) }

    /// The same shape for what is no verdict of the input but the server's own trouble
    /// (`STORE_UNAVAILABLE`, `NO_STORE`, `LOOKUP_BUSY`, `LOOKUP_FAILED`), so that no
    /// status of the library is borrowed for it.
    public static func failure(_ name: String, _ detail: String) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.string("status", name)
        writer.string("detail", detail)
        writer.endObject()
        return writer.bytes
    }
}
