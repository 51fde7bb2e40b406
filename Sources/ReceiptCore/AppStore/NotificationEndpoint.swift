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

    /// A notification, or why it is refused: a body that is not Apple's object, a
    /// `signedPayload` that is not a readable JWS or not a notification, one whose
    /// verification fails (the failed step's status and detail, a nested member's
    /// named), or one without what a store keys it by.
    public func read(body: [UInt8]) -> Result<ReceivedNotification, ReceiptError> {
        do throws(ReceiptError) {
            let document = try body.withUnsafeBufferPointer { (bytes) throws(ReceiptError) in
                try JSONValue.parse(bytes, limits: Self.bodyLimits)
            }
            guard case .object = document else {
                throw ReceiptError(.notAnObject, "the body is JSON but not an object")
            }
            guard let token = document["signedPayload"]?.stringValue else {
                throw ReceiptError(.badField, "the body has no \"signedPayload\" string")
            }
            let payload = try SignedPayload.decode(token)
            return .success(try ReceivedNotification(payload, verified: verifier.verify(jws: payload)))
        } catch {
            return .failure(error)
        }
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

    /// The body of a refusal or a failure of the store's endpoints: `{"status": name, "detail": …}`.
    public static func refusal(_ error: ReceiptError) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.string("status", error.status.name)
        writer.string("detail", error.detail)
        writer.endObject()
        return writer.bytes
    }
}
