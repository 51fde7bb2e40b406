/// A decoded JWS as `receipt inspect` prints it and `receipt_jws_to_json` returns it:
/// `{"format": "jws", "type", "header", "payload", "signed_date_ms", "certificates"}`,
/// the header and payload exactly as signed (their bytes, not a re-encoding), so
/// that a reader sees what Apple wrote.
public enum SignedPayloadJSON {
    public static func render(_ payload: SignedPayload, indent: Int? = nil) -> String {
        var writer = JSONWriter(indent: indent)
        writer.beginObject()
        writer.string("format", "jws")
        writer.string("type", payload.kind.rawValue)
        writer.raw("header", payload.headerBytes)
        writer.raw("payload", payload.jws.payloadBytes)
        if let signed = payload.signingDate { writer.number("signed_date_ms", signed) } else { writer.null("signed_date_ms") }
        writer.number("certificates", Int64(payload.certificateChain.count))
        writer.endObject()
        return writer.string
    }
}
