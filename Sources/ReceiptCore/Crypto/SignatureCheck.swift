internal import COpenSSL

/// RSA PKCS #1 v1.5 verification of the receipt signature with the signer's key.
///
/// The digest is computed with a pre-fetched algorithm and checked on the key
/// itself (shim_rsa_verify_digest says why not EVP_DigestVerify).
enum SignatureCheck {
    static func verify(_ signature: UnsafeBufferPointer<UInt8>, over message: UnsafeBufferPointer<UInt8>,
                       digest: DigestAlgorithm, certificate: X509Certificate) throws(ReceiptError) {
        defer { OpenSSLErrors.clear() }
        guard let key = X509_get0_pubkey(certificate.pointer), EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA else {
            throw ReceiptError(.unsupportedSignature, "the signing key of \(certificate.subject) is not RSA")
        }
        let (algorithm, nid) = digest == .sha1 ? (Digest.sha1Algorithm, NID_sha1) : (Digest.sha256Algorithm, NID_sha256)
        let hash = Digest.digest(message, algorithm)
        guard !hash.isEmpty else { throw ReceiptError(.cryptoFailure, "the \(digest.name) digest failed\(OpenSSLErrors.reason())") }
        let valid = shim_rsa_verify_digest(nid, hash, UInt32(hash.count), signature.baseAddress, UInt32(signature.count), key)
        guard valid == 1 else {
            throw ReceiptError(.signatureInvalid, "RSA/\(digest.name) signature by \(certificate.subject) does not match the payload")
        }
    }
}
