internal import COpenSSL

/// An RSA public key made ready for PKCS #1 v1.5 verification (shim_rsa_public
/// says how): its shape read, and its modulus's Montgomery form computed, once.
/// Immutable once made; read by any number of threads.
final class RSAPublicKey: @unchecked Sendable {
    let modulusBits: Int
    let exponentIsF4: Bool
    /// k, the modulus's length in bytes: every signature's length (RFC 8017 §8.2.2).
    var signatureLength: Int { (modulusBits + 7) / 8 }
    /// Nil when the key's shape is refused (SignatureCheck), so no arithmetic is set up for it.
    private let prepared: UnsafeMutablePointer<shim_rsa_public>?

    /// Nil when the certificate's key is not RSA. `allowedBits`: the moduli worth
    /// preparing; another key keeps its shape, for SignatureCheck to refuse by name.
    init?(_ certificate: X509Certificate, allowedBits: ClosedRange<Int>) throws(ReceiptError) {
        defer { OpenSSLErrors.clear() }  // EVP_PKEY_get0_RSA says on the queue that a key is not RSA
        var bits: Int32 = 0, isF4: Int32 = 0
        guard let key = X509_get0_pubkey(certificate.pointer), let rsa = shim_rsa_key(key, &bits, &isF4) else { return nil }
        modulusBits = Int(bits)
        exponentIsF4 = isF4 == 1
        guard allowedBits.contains(modulusBits) && exponentIsF4 else {
            prepared = nil
            return
        }
        guard let made = shim_rsa_public_new(rsa) else {
            throw ReceiptError(.noMemory, "the RSA key of \(certificate.subject) cannot be prepared\(OpenSSLErrors.reason())")
        }
        prepared = made
    }

    deinit { shim_rsa_public_free(prepared) }

    /// Whether `signature` is this key's PKCS #1 v1.5 signature of `digest`.
    func verifies(_ signature: UnsafeBufferPointer<UInt8>, digest: UnsafeBufferPointer<UInt8>,
                  _ algorithm: DigestAlgorithm) throws(ReceiptError) -> Bool {
        guard let prepared else { return false }
        let verdict = PKCS1Encoding.withEncoded(digest, algorithm, length: Int(prepared.pointee.length)) { expected in
            BigNumberScratch.with { context in
                shim_rsa_public_matches(prepared, context, signature.baseAddress, signature.count, expected)
            }
        }
        guard let verdict, verdict >= 0 else {
            throw ReceiptError(.noMemory, "no memory for the RSA signature check\(OpenSSLErrors.reason())")
        }
        return verdict == 1
    }
}

/// EMSA-PKCS1-v1_5 (RFC 8017 §9.2): the `length` bytes a valid signature, raised
/// to e mod n, equals: 0x00 0x01, 0xFF padding, 0x00, then the DigestInfo.
enum PKCS1Encoding {
    /// DER of DigestInfo up to the digest, with NULL parameters (RFC 8017 §9.2, note 1).
    static let sha1DigestInfo: [UInt8] = [0x30, 0x21, 0x30, 0x09, 0x06, 0x05, 0x2B, 0x0E, 0x03, 0x02, 0x1A, 0x05, 0x00,
                                          0x04, 0x14]
    static let sha256DigestInfo: [UInt8] = [0x30, 0x31, 0x30, 0x0D, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04,
                                            0x02, 0x01, 0x05, 0x00, 0x04, 0x20]

    /// Runs `body` with the encoding of `digest` in `length` bytes, on the stack (an
    /// array here would be an allocation on every verdict's path). `length` is at
    /// least 11 bytes more than the DigestInfo (the RFC's minimum of 8 padding
    /// bytes): every modulus SignatureCheck allows is.
    static func withEncoded<Result>(_ digest: UnsafeBufferPointer<UInt8>, _ algorithm: DigestAlgorithm, length: Int,
                                    _ body: (UnsafePointer<UInt8>) -> Result) -> Result {
        let prefix = algorithm == .sha1 ? sha1DigestInfo : sha256DigestInfo
        let infoStart = length - prefix.count - digest.count
        precondition(infoStart >= 11, "an RSA modulus too short for PKCS #1 v1.5")
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: length) { encoded in
            encoded.initialize(repeating: 0xFF)
            encoded[0] = 0x00
            encoded[1] = 0x01
            encoded[infoStart - 1] = 0x00
            for (offset, byte) in prefix.enumerated() { encoded[infoStart + offset] = byte }
            for (offset, byte) in digest.enumerated() { encoded[length - digest.count + offset] = byte }
            return body(UnsafePointer(encoded.baseAddress!))
        }
    }
}
