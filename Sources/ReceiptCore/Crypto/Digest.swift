internal import COpenSSL

enum Digest {
    static func sha1(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBufferPointer { of($0, .sha1) }
    }

    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBufferPointer { of($0, .sha256) }
    }

    /// Runs `body` with the digest of `bytes`: `known` when the caller has it, else
    /// computed on the stack (no array allocated on a verdict's path).
    static func with<Result>(_ bytes: UnsafeBufferPointer<UInt8>, _ algorithm: DigestAlgorithm, known: [UInt8]?,
                             _ body: (UnsafeBufferPointer<UInt8>) throws(ReceiptError) -> Result) throws(ReceiptError) -> Result {
        if let known { return try known.withUnsafeBufferPointer { (digest) throws(ReceiptError) in try body(digest) } }
        return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: length(algorithm)) { (output) throws(ReceiptError) in
            write(bytes, algorithm, into: output)
            return try body(UnsafeBufferPointer(output))
        }
    }

    /// Through libcrypto's low-level functions (shim_sha_digest says why): no EVP
    /// context to allocate and no provider to consult, on the path of every verdict.
    static func of(_ bytes: UnsafeBufferPointer<UInt8>, _ algorithm: DigestAlgorithm) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: length(algorithm)) { output, count in
            write(bytes, algorithm, into: output)
            count = length(algorithm)
        }
    }

    private static func length(_ algorithm: DigestAlgorithm) -> Int {
        algorithm == .sha1 ? Int(SHA_DIGEST_LENGTH) : Int(SHA256_DIGEST_LENGTH)
    }

    /// The digest into `output`, which holds `length(algorithm)` bytes.
    private static func write(_ bytes: UnsafeBufferPointer<UInt8>, _ algorithm: DigestAlgorithm,
                              into output: UnsafeMutableBufferPointer<UInt8>) {
        shim_sha_digest(algorithm == .sha256 ? 1 : 0, bytes.baseAddress, bytes.count, output.baseAddress)
    }
}
