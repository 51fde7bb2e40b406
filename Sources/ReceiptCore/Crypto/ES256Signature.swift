internal import COpenSSL

/// ES256 (RFC 7518 §3.4): ECDSA on P-256 with SHA-256, the signature exactly 64
/// bytes of r‖s. A DER-encoded ECDSA signature, or any other length, is refused
/// before any arithmetic: one signature has one spelling.
enum ES256Signature {
    static let length = 64

    /// `digest`: the SHA-256 of `header.payload` (the JWS's fingerprint, computed
    /// once for both). `precomputed`: the certificate's key with its table
    /// (`ES256Key`), when the caller holds one; the answer is the same, in about half the time.
    static func verify(_ signature: [UInt8], digest hash: [UInt8],
                       certificate: X509Certificate, precomputed: ES256Key? = nil) throws(ReceiptError) {
        defer { OpenSSLErrors.clear() }
        guard signature.count == length else {
            let shape = signature.first == BERTag.sequence && signature.count > 8 ? " (it looks DER-encoded)" : ""
            throw ReceiptError(.badSignatureEncoding, "an ES256 signature is 64 bytes of r||s; this one is \(signature.count)\(shape)")
        }
        guard let key = X509_get0_pubkey(certificate.pointer), EVP_PKEY_get_base_id(key) == EVP_PKEY_EC else {
            throw ReceiptError(.unsupportedSignature, "the key of \(certificate.subject) is not an EC key, as ES256 needs")
        }
        guard hash.count == 32 else { throw ReceiptError(.cryptoFailure, "the SHA-256 digest failed\(OpenSSLErrors.reason())") }
        let verdict = precomputed.map { precomputed in
            BigNumberScratch.with { shim_es256_key_verify(precomputed.pointer, $0, hash, signature) } ?? -2
        } ?? shim_es256_verify_digest(hash, signature, key)
        switch verdict {
        case 1: return
        case -1: throw ReceiptError(.unsupportedSignature, "the key of \(certificate.subject) is not on P-256, as ES256 needs")
        case -2: throw ReceiptError(.noMemory, "no memory for the ECDSA signature\(OpenSSLErrors.reason())")
        default: throw ReceiptError(.signatureInvalid, "the ES256 signature by \(certificate.subject) does not match header.payload")
        }
    }
}

/// A P-256 public key with a precomputed table of its multiples (shim.h says how),
/// for a key that signs many JWS. Immutable once built; OpenSSL reads the table
/// from any number of threads.
final class ES256Key: @unchecked Sendable {
    fileprivate let pointer: UnsafeMutablePointer<shim_es256_key>

    /// Nil when the certificate's key is not P-256, or the table cannot be built.
    init?(_ certificate: X509Certificate) {
        defer { OpenSSLErrors.clear() }
        guard let key = X509_get0_pubkey(certificate.pointer), let built = shim_es256_key_new(key) else { return nil }
        pointer = built
    }

    deinit { shim_es256_key_free(pointer) }
}
