internal import COpenSSL

/// A P-256 private key that signs ES256 (RFC 7518 §3.4): an App Store Connect
/// in-app purchase key, read from its PKCS #8 PEM as downloaded. Immutable once
/// read; OpenSSL signs with one key from any number of threads.
final class ES256PrivateKey: @unchecked Sendable {
    private let key: OpaquePointer

    /// Refuses anything but a PKCS #8 PEM of an EC key on P-256, naming what it found.
    init(pem: [UInt8]) throws(ReceiptError) {
        defer { OpenSSLErrors.clear() }
        guard !pem.isEmpty else { throw ReceiptError(.invalidArgument, "the private key is empty") }
        var isP256: Int32 = 0
        let read = pem.withUnsafeBytes { shim_private_key_from_pem($0.baseAddress, Int32(clamping: $0.count), &isP256) }
        guard let read else {
            throw ReceiptError(.invalidArgument, "the private key is not a PEM private key (\"-----BEGIN PRIVATE KEY-----\", "
                               + "PKCS #8, as App Store Connect downloads it)\(OpenSSLErrors.reason())")
        }
        guard isP256 == 1 else {
            let kind = EVP_PKEY_get_base_id(read) == EVP_PKEY_EC ? "an EC key on another curve" : "not an EC key"
            EVP_PKEY_free(read)
            throw ReceiptError(.invalidArgument, "the private key is \(kind); App Store Connect keys are P-256 (ES256)")
        }
        key = read
    }

    deinit { EVP_PKEY_free(key) }

    /// 64 bytes of r‖s over `message`'s SHA-256.
    func sign(_ message: [UInt8]) throws(ReceiptError) -> [UInt8] {
        defer { OpenSSLErrors.clear() }
        let digest = Digest.sha256(message)
        var signature = [UInt8](repeating: 0, count: ES256Signature.length)
        guard digest.count == 32, shim_es256_sign_digest(key, digest, &signature) == 1 else {
            throw ReceiptError(.cryptoFailure, "ES256 signing failed\(OpenSSLErrors.reason())")
        }
        return signature
    }

    /// Verifies an ES256 signature with this key's public half (tests, and a signer's self-check).
    func verify(_ signature: [UInt8], over message: [UInt8]) -> Bool {
        defer { OpenSSLErrors.clear() }
        guard signature.count == ES256Signature.length else { return false }
        return shim_es256_verify_digest(Digest.sha256(message), signature, key) == 1
    }
}
