import COpenSSL

/// RSA PKCS #1 v1.5 verification of the receipt signature with the signer's key.
enum SignatureCheck {
    static func verify(_ signature: UnsafeBufferPointer<UInt8>, over message: UnsafeBufferPointer<UInt8>,
                       digest: SignerInfo.Digest, certificate: X509Certificate) throws(ReceiptError) {
        defer { OpenSSLErrors.clear() }
        guard let key = X509_get0_pubkey(certificate.pointer), EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA else {
            throw ReceiptError(.unsupportedSignature, "the signing key of \(certificate.subject) is not RSA")
        }
        guard let context = EVP_MD_CTX_new() else { throw ReceiptError(.cryptoFailure, "EVP_MD_CTX_new failed") }
        defer { EVP_MD_CTX_free(context) }
        let algorithm = digest == .sha1 ? EVP_sha1() : EVP_sha256()
        guard EVP_DigestVerifyInit(context, nil, algorithm, nil, key) == 1 else {
            throw ReceiptError(.cryptoFailure, "EVP_DigestVerifyInit refused RSA with \(digest.name)")
        }
        let result = EVP_DigestVerify(context, signature.baseAddress, signature.count, message.baseAddress, message.count)
        switch result {
        case 1: return
        case 0: throw ReceiptError(.signatureInvalid, "RSA/\(digest.name) signature by \(certificate.subject) does not match the payload")
        default: throw ReceiptError(.signatureInvalid, "the signature could not be checked (malformed RSA signature)")
        }
    }
}
