/// What one verified App Store Server Notification (V2) gives a store: the
/// notification's identity (its UUID is how a redelivery is recognized), and the
/// signed transaction and renewal info it carries as rows, each its own JWS as
/// Apple signed it. Made only from a notification whose verification passed, so
/// the nested payloads were verified too (the nested step, at their own dates).
public struct ReceivedNotification: Sendable {
    public let notificationUUID: String
    public let notificationType: String
    public let subtype: String?
    public let signedDate: Int64
    /// The subscription or purchase it is about, when it carries one.
    public let originalTransactionID: String?
    public let environment: String?
    /// The notification as Apple signed it (JWS), so that whoever is told of it can check it again.
    public let signedPayload: String
    public let transaction: StoredTransaction?
    public let renewalInfo: StoredRenewalInfo?
    /// A `RESCIND_CONSENT` notification's row: whose consent was withdrawn, and since when.
    public let consentRescission: StoredConsentRescission?

    /// A verified notification's rows. Refused (`RECEIPT_E_BAD_FIELD`, naming the
    /// member) when the verification did not pass, when it lacks the UUID or type
    /// every V2 notification has, when a nested member is no transaction or renewal
    /// info with ids and a signing date, or when the two name different subscriptions.
    public init(_ notification: SignedPayload, verified verification: VerificationResult) throws(ReceiptError) {
        if let failure = verification.firstFailure { throw failure }
        try self.init(alreadyVerified: notification)
    }

    /// For a notification whose verification passed elsewhere: an App Store Server API
    /// answer is refused whole unless every signed member in it verified (SignedMembers).
    init(alreadyVerified notification: SignedPayload) throws(ReceiptError) {
        guard notification.kind == .notification else {
            throw ReceiptError(.badField, "signedPayload is a \(notification.kind.rawValue), not a notification")
        }
        guard let uuid = notification.string("notificationUUID"), !uuid.isEmpty else {
            throw ReceiptError(.badField, "the notification has no notificationUUID")
        }
        guard let type = notification.string("notificationType"), !type.isEmpty else {
            throw ReceiptError(.badField, "the notification has no notificationType")
        }
        guard let signed = notification.signingDate else {
            throw ReceiptError(.noCreationDate, "the notification has no signedDate")
        }
        notificationUUID = uuid
        notificationType = type
        subtype = notification.string("subtype")
        signedDate = signed
        environment = notification.environmentName
        signedPayload = notification.compactSerialization
        transaction = try Self.nested("data.signedTransactionInfo", of: notification, as: StoredTransaction.init(verified:))
        renewalInfo = try Self.nested("data.signedRenewalInfo", of: notification, as: StoredRenewalInfo.init(verified:))
        if let transaction, let renewalInfo, transaction.originalTransactionID != renewalInfo.originalTransactionID {
            throw ReceiptError(.badField, "data.signedTransactionInfo is of original transaction \(transaction.originalTransactionID), "
                               + "data.signedRenewalInfo of \(renewalInfo.originalTransactionID)")
        }
        originalTransactionID = transaction?.originalTransactionID ?? renewalInfo?.originalTransactionID
        // Only RESCIND_CONSENT means a withdrawal; its app transaction says whose.
        if type == Self.rescindConsent {
            let rescission = try Self.nested("appData.signedAppTransactionInfo", of: notification, kind: .appTransaction) {
                StoredConsentRescission(notificationUUID: uuid, signedDate: signed, appTransaction: $0)
            }
            guard let rescission else {
                throw ReceiptError(.badField, "a RESCIND_CONSENT notification without appData.signedAppTransactionInfo names no customer")
            }
            consentRescission = rescission
        } else {
            consentRescission = nil
        }
    }

    static let rescindConsent = "RESCIND_CONSENT"

    /// The row `row` makes of the JWS at `path` (decoded as `kind`, else by its members), or nil when absent.
    private static func nested<Row>(_ path: String, of notification: SignedPayload, kind: SignedPayloadKind? = nil,
                                    as row: (SignedPayload) -> Row?) throws(ReceiptError) -> Row? {
        guard let token = notification.string(path) else { return nil }
        let payload: SignedPayload
        do throws(ReceiptError) {
            payload = try SignedPayload.decode(token, as: kind)
        } catch {
            throw ReceiptError(error.status, "\(path): \(error.detail)")
        }
        guard let made = row(payload) else {
            throw ReceiptError(.badField, "\(path) is a \(payload.kind.rawValue) without the ids and dates a store keys it by")
        }
        return made
    }
}
