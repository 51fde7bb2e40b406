/// A customer's consent as `receipt serve` answers `GET /v1/consent/{appTransactionId}`:
/// `consent` is `rescinded` once a `RESCIND_CONSENT` notification for that app
/// transaction reached the store, with `rescinded_at_ms` (the notification's signing
/// date), its `notificationUUID`, and the signed app transaction it carried
/// (`signedAppTransactionInfo`, its payload beside it as `app_transaction_info`), so that
/// a reader can verify it again; otherwise `not_rescinded`: no such notification is
/// known (Apple sends none that gives consent back).
public enum ConsentStateJSON {
    public static func render(appTransactionID: String, rescission: StoredConsentRescission?, indent: Int? = nil) -> [UInt8] {
        var writer = JSONWriter(indent: indent)
        writer.beginObject()
        writer.string("appTransactionId", appTransactionID)
        if let rescission, let appTransaction = try? SignedPayload.decode(rescission.jws) {
            writer.string("consent", "rescinded")
            writer.number("rescinded_at_ms", rescission.signedDate)
            writer.string("notificationUUID", rescission.notificationUUID)
            writer.string("signedAppTransactionInfo", rescission.jws)
            writer.raw("app_transaction_info", appTransaction.payloadBytes)
        } else {
            writer.string("consent", "not_rescinded")
        }
        writer.endObject()
        return writer.bytes
    }
}
