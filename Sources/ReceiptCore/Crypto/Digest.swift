internal import COpenSSL

enum Digest {
    /// Fetched once: OpenSSL 3 otherwise looks the implementation up again on every use.
    nonisolated(unsafe) static let sha1Algorithm = EVP_MD_fetch(nil, "SHA1", nil)
    nonisolated(unsafe) static let sha256Algorithm = EVP_MD_fetch(nil, "SHA256", nil)

    static func sha1(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBufferPointer { digest($0, sha1Algorithm) }
    }

    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBufferPointer { digest($0, sha256Algorithm) }
    }

    static func digest(_ bytes: UnsafeBufferPointer<UInt8>, _ algorithm: OpaquePointer?) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var written: UInt32 = 0
        let ok = EVP_Digest(bytes.baseAddress, bytes.count, &output, &written, algorithm, nil)
        // A digest of memory we hold cannot fail short of the library being broken;
        // an empty result then fails every comparison, which is closed, not open.
        guard ok == 1 else { return [] }
        return Array(output[0..<Int(written)])
    }
}
