internal import COpenSSL

/// RSA PKCS #1 v1.5 verification of the receipt signature with the signer's key.
///
/// The digest is computed with libcrypto's one-shot function and checked on the key
/// itself (shim_rsa_verify_digest says why not EVP_DigestVerify). The key's shape
/// is checked first: RSA's cost grows with the modulus and the public exponent,
/// and both come from a certificate anyone can make, while this step runs before
/// the chain says whether the key could be trusted. Apple signs receipts with
/// 2048-bit keys and e = 65537; a key outside `allowedModulusBits`, or with another
/// exponent, is refused before any arithmetic, so no receipt costs more than a
/// genuine one of its size.
enum SignatureCheck {
    /// Apple's receipt keys (leaf, WWDR intermediates, roots, Xcode's StoreKit
    /// certificate) are all 2048-bit; up to 4096 is allowed for a key rollover.
    static let allowedModulusBits = 2048...4096

    /// `sha256`: the payload's SHA-256 when the caller has it (the fingerprint),
    /// used instead of hashing again when the signer's digest is SHA-256.
    static func verify(_ signature: UnsafeBufferPointer<UInt8>, over message: UnsafeBufferPointer<UInt8>,
                       digest: DigestAlgorithm, certificate: X509Certificate, sha256: [UInt8]? = nil) throws(ReceiptError) {
        var modulusBits: Int32 = 0, exponentIsF4: Int32 = 0
        guard let key = X509_get0_pubkey(certificate.pointer),
              let rsa = shim_rsa_key(key, &modulusBits, &exponentIsF4) else {
            OpenSSLErrors.clear()  // EVP_PKEY_get0_RSA says on the queue that the key is not RSA
            throw ReceiptError(.unsupportedSignature, "the signing key of \(certificate.subject) is not RSA")
        }
        let bits = Int(modulusBits)
        guard allowedModulusBits.contains(bits) else {
            throw ReceiptError(.keyRefused, "the RSA key of \(certificate.subject) has a \(bits)-bit modulus; receipts are "
                               + "signed with \(allowedModulusBits.lowerBound) to \(allowedModulusBits.upperBound) bits")
        }
        guard exponentIsF4 == 1 else {
            throw ReceiptError(.keyRefused, "the RSA key of \(certificate.subject) has a public exponent other than 65537, "
                               + "which Apple never uses")
        }
        let hash = digest == .sha256 ? sha256 ?? Digest.of(message, .sha256) : Digest.of(message, .sha1)
        let nid = digest == .sha1 ? NID_sha1 : NID_sha256
        let valid = shim_rsa_verify_digest(nid, hash, UInt32(hash.count), signature.baseAddress, UInt32(signature.count), rsa)
        guard valid == 1 else {
            // Only a mismatch leaves errors on the thread's queue; a verdict that passes
            // pays nothing to clear it (ERR_clear_error walks the whole queue).
            OpenSSLErrors.clear()
            throw ReceiptError(.signatureInvalid, "RSA/\(digest.name) signature by \(certificate.subject) does not match the payload")
        }
    }
}
