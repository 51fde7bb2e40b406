internal import COpenSSL

/// RSA PKCS #1 v1.5 verification of the receipt signature with the signer's key.
///
/// The digest is computed with libcrypto's low-level function and checked with the
/// key made ready once (RSAPublicKey; shim_rsa_public says why). The key's shape
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

    /// `key`: the signer's key made ready (CertificateBag.rsaKey), nil when it is not RSA.
    /// `sha256`: the payload's SHA-256 when the caller has it (the fingerprint),
    /// used instead of hashing again when the signer's digest is SHA-256.
    static func verify(_ signature: UnsafeBufferPointer<UInt8>, over message: UnsafeBufferPointer<UInt8>,
                       digest: DigestAlgorithm, certificate: X509Certificate, key: RSAPublicKey?,
                       sha256: [UInt8]? = nil) throws(ReceiptError) {
        guard let key else {
            throw ReceiptError(.unsupportedSignature, "the signing key of \(certificate.subject) is not RSA")
        }
        guard allowedModulusBits.contains(key.modulusBits) else {
            throw ReceiptError(.keyRefused, "the RSA key of \(certificate.subject) has a \(key.modulusBits)-bit modulus; receipts are "
                               + "signed with \(allowedModulusBits.lowerBound) to \(allowedModulusBits.upperBound) bits")
        }
        guard key.exponentIsF4 else {
            throw ReceiptError(.keyRefused, "the RSA key of \(certificate.subject) has a public exponent other than 65537, "
                               + "which Apple never uses")
        }
        guard signature.count == key.signatureLength else {  // I2OSP writes k bytes (RFC 8017 §8.2.2 step 1)
            throw ReceiptError(.signatureInvalid, "the RSA signature by \(certificate.subject) is \(signature.count) bytes; "
                               + "its \(key.modulusBits)-bit key's are \(key.signatureLength)")
        }
        guard try Digest.with(message, digest, known: digest == .sha256 ? sha256 : nil, { hash throws(ReceiptError) in
            try key.verifies(signature, digest: hash, digest)
        }) else {
            throw ReceiptError(.signatureInvalid, "RSA/\(digest.name) signature by \(certificate.subject) does not match the payload")
        }
    }
}
