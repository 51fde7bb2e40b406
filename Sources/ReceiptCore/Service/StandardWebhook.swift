/// Signatures of webhook messages as the Standard Webhooks specification writes them
/// (standardwebhooks.com): the sender signs `id.timestamp.body` with HMAC-SHA256 under
/// the endpoint's secret and sends `webhook-id`, `webhook-timestamp` (seconds since the
/// epoch) and `webhook-signature` (`v1,` + base64, several separated by spaces while a
/// secret is rotated). `receipt serve` signs its events with it; a receiver checks them
/// with `verify` (C: receipt_webhook_verify; Python: libreceipt.webhook).
public enum StandardWebhook {
    /// How far a message's timestamp may be from the receiver's clock (the specification's
    /// five minutes), so that a captured message cannot be replayed later.
    public static let defaultToleranceSeconds: Int64 = 300
    /// The longest secret key accepted (the specification suggests 24 to 64 bytes).
    public static let maxSecretBytes = 256
    /// The most signatures one `webhook-signature` header may list.
    public static let maxSignatures = 16

    /// A webhook secret: `whsec_` + base64 of the key, as the specification writes it.
    public struct Secret: Sendable {
        let key: [UInt8]

        /// Refuses (`RECEIPT_E_INVALID_ARGUMENT`) text without the `whsec_` prefix, key bytes
        /// that are not base64, and a key under 16 bytes or over maxSecretBytes.
        public init(_ text: String) throws(ReceiptError) {
            let trimmed = text.trimmingWhitespace
            guard trimmed.hasPrefix("whsec_") else {
                throw ReceiptError(.invalidArgument, "a webhook secret is whsec_ followed by base64 (the Standard Webhooks form)")
            }
            let decoded: [UInt8]
            do throws(ReceiptError) {
                decoded = try Base64.decode(Array(trimmed.utf8.dropFirst(6)))
            } catch {
                throw ReceiptError(.invalidArgument, "the webhook secret after whsec_ is not base64: \(error.detail)")
            }
            guard (16...maxSecretBytes).contains(decoded.count) else {
                throw ReceiptError(.invalidArgument, "a webhook secret's key is 16 to \(maxSecretBytes) bytes; this one is \(decoded.count)")
            }
            key = decoded
        }
    }

    /// The `webhook-signature` value for a message: `v1,` + base64 of the HMAC.
    public static func signature(secret: Secret, id: String, timestamp: Int64, body: [UInt8]) throws(ReceiptError) -> String {
        "v1," + Base64.encode(try HMACSHA256.mac(key: secret.key, message: Array("\(id).\(timestamp).".utf8) + body))
    }

    /// Checks a received message: its timestamp within `toleranceSeconds` of `now` (seconds
    /// since the epoch) and one of the `v1` signatures in `signatureHeader` made with
    /// `secret` over this id, timestamp and body (compared in constant time).
    /// Throws `RECEIPT_E_BAD_FIELD` for a malformed id, timestamp or header,
    /// `RECEIPT_E_SIGNATURE_INVALID` when the timestamp is out of tolerance or no signature matches.
    public static func verify(secret: Secret, id: String, timestamp: String, body: [UInt8], signatureHeader: String,
                              now: Int64, toleranceSeconds: Int64 = defaultToleranceSeconds) throws(ReceiptError) {
        guard !id.isEmpty, id.utf8.count <= 256 else {
            throw ReceiptError(.badField, "webhook-id is empty or longer than 256 bytes")
        }
        guard timestamp.utf8.count <= 12, let seconds = Int64(timestamp), seconds >= 0 else {
            throw ReceiptError(.badField, "webhook-timestamp \"\(timestamp.prefix(20))\" is not seconds since the epoch")
        }
        guard abs(now - seconds) <= max(0, toleranceSeconds) else {
            throw ReceiptError(.signatureInvalid, "webhook-timestamp \(seconds) is \(abs(now - seconds)) s from now; "
                               + "at most \(toleranceSeconds) s is accepted (a replayed or delayed message)")
        }
        let offered = signatureHeader.split(separator: " ", omittingEmptySubsequences: true)
        guard !offered.isEmpty, offered.count <= maxSignatures else {
            throw ReceiptError(.badField, "webhook-signature holds \(offered.count) signatures; 1 to \(maxSignatures) are read")
        }
        let expected = try signature(secret: secret, id: id, timestamp: seconds, body: body)
        let versioned = offered.filter { $0.hasPrefix("v1,") }.map(String.init)
        guard !versioned.isEmpty else {
            throw ReceiptError(.badField, "webhook-signature holds no v1 signature (\"v1,\" + base64)")
        }
        guard SharedSecret.matchesAny(expected, of: versioned) else {
            throw ReceiptError(.signatureInvalid, "no webhook-signature matches this secret, id, timestamp and body")
        }
    }
}

extension String {
    /// Without leading and trailing spaces, tabs and line breaks (a secret read from a file ends with one).
    var trimmingWhitespace: String {
        let bytes = Array(utf8)
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(decoding: bytes[first...last], as: UTF8.self)
    }
}
