/// The key to de-duplicate and to block replays on: the SHA-256 of what the
/// signature covers, which no re-spelling of the signed object changes.
///
/// Bytes outside the signed content can be re-spelt without any key: an ECDSA
/// signature verifies as (r, s) and as (r, n − s), and 8 of 25 genuine Apple
/// tokens are high-s, so low-s cannot be required; a receipt's envelope has
/// unsigned fields. Hashing the whole token or file therefore does not identify
/// the signed object. Hashing the signed content does:
/// - a JWS: the ASCII `header.payload`, whose base64url is strict (no padding,
///   zero spare bits), so one header and payload have one spelling;
/// - a receipt: its payload, the ASN.1 set of attributes Apple signed (BER
///   chunks joined), the same whether the receipt came as DER, BER or base64.
/// Two inputs with the same fingerprint carry the same signed content; a valid
/// verdict on either says that content is Apple's.
public enum ContentFingerprint {
    public static let byteCount = 32

    /// Lowercase hex, as the CLI, Python, batches and the server write it.
    public static func hex(_ fingerprint: [UInt8]) -> String { hexString(fingerprint) }
}

extension SignedPayload {
    /// SHA-256 of `header.payload` as signed (ContentFingerprint).
    public var fingerprint: [UInt8] {
        jws.token.withUnsafeBufferPointer { Digest.digest(UnsafeBufferPointer(rebasing: $0[jws.signingInput]), Digest.sha256Algorithm) }
    }
}

extension Receipt {
    /// SHA-256 of the signed payload (ContentFingerprint).
    public var fingerprint: [UInt8] { Digest.digest(storage.payload, Digest.sha256Algorithm) }
}
