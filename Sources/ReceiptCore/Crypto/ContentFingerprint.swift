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
        jws.token.withUTF8Bytes { Digest.of(UnsafeBufferPointer(rebasing: $0[jws.signingInput]), .sha256) }
    }
}

extension Receipt {
    /// SHA-256 of the signed payload (ContentFingerprint).
    public var fingerprint: [UInt8] { Digest.of(storage.payload, .sha256) }
}

/// A verification result's fingerprint, hashed when first asked for rather than on
/// every verification: a receipt signed with SHA-1 (Apple's chains until 2024) would
/// otherwise pay a second digest of its whole payload (docs/performance.md has its
/// cost) for a value most callers never read. A JWS's,
/// and a SHA-256 receipt's, is known already: its signature check computed it.
public final class FingerprintSource: Sendable {
    private enum Source: Sendable {
        case known([UInt8])
        /// A receipt that owns its bytes (kept alive by this source).
        case receipt(Receipt)
        /// A copy of the payload of a receipt that borrowed the caller's bytes and
        /// must not outlive the call (ReceiptVerifier.verify(encoded:)).
        case payload([UInt8])
    }

    private let source: Source

    init(known digest: [UInt8]) { source = .known(digest) }

    /// For a receipt whose signature did not hash its payload with SHA-256.
    init(later receipt: Receipt) {
        source = receipt.storage.ownsEncoding ? .receipt(receipt) : .payload(Array(receipt.storage.payload))
    }

    public var value: [UInt8] {
        switch source {
        case .known(let digest): digest
        case .receipt(let receipt): receipt.fingerprint
        case .payload(let bytes): Digest.sha256(bytes)
        }
    }
}
