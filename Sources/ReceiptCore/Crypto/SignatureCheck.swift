import COpenSSL

/// RSA PKCS #1 v1.5 verification of the receipt signature with the signer's key.
///
/// The digest is computed with a pre-fetched algorithm and checked with RSA_verify
/// on the key itself: the EVP_DigestVerify path builds a provider context per call,
/// which costs as much as the rest of a warm verification.
enum SignatureCheck {
    static func verify(_ signature: UnsafeBufferPointer<UInt8>, over message: UnsafeBufferPointer<UInt8>,
                       digest: SignerInfo.Digest, certificate: X509Certificate) throws(ReceiptError) {
        defer { OpenSSLErrors.clear() }
        guard let key = X509_get0_pubkey(certificate.pointer), EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA,
              let rsa = EVP_PKEY_get0_RSA(key) else {
            throw ReceiptError(.unsupportedSignature, "the signing key of \(certificate.subject) is not RSA")
        }
        let (algorithm, nid) = digest == .sha1 ? (Digest.sha1Algorithm, NID_sha1) : (Digest.sha256Algorithm, NID_sha256)
        let hash = Digest.digest(message, algorithm)
        guard !hash.isEmpty else { throw ReceiptError(.cryptoFailure, "the \(digest.name) digest failed") }
        let valid = RSA_verify(nid, hash, UInt32(hash.count), signature.baseAddress, UInt32(signature.count), rsa)
        guard valid == 1 else {
            throw ReceiptError(.signatureInvalid, "RSA/\(digest.name) signature by \(certificate.subject) does not match the payload")
        }
    }
}
