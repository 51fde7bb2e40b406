internal import COpenSSL

enum Digest {
    static func sha1(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBufferPointer { of($0, .sha1) }
    }

    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBufferPointer { of($0, .sha256) }
    }

    /// Through libcrypto's low-level functions (shim_sha_digest says why): no EVP
    /// context to allocate and no provider to consult, on the path of every verdict.
    static func of(_ bytes: UnsafeBufferPointer<UInt8>, _ algorithm: DigestAlgorithm) -> [UInt8] {
        let length = algorithm == .sha1 ? Int(SHA_DIGEST_LENGTH) : Int(SHA256_DIGEST_LENGTH)
        return [UInt8](unsafeUninitializedCapacity: length) { output, count in
            shim_sha_digest(algorithm == .sha256 ? 1 : 0, bytes.baseAddress, bytes.count, output.baseAddress)
            count = length
        }
    }
}
