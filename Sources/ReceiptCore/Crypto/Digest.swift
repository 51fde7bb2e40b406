import COpenSSL

enum Digest {
    static func sha1(_ bytes: [UInt8]) -> [UInt8] { digest(bytes, EVP_sha1(), length: 20) }
    static func sha256(_ bytes: [UInt8]) -> [UInt8] { digest(bytes, EVP_sha256(), length: 32) }

    private static func digest(_ bytes: [UInt8], _ algorithm: OpaquePointer?, length: Int) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var written: UInt32 = 0
        let ok = bytes.withUnsafeBytes { input in
            EVP_Digest(input.baseAddress, input.count, &output, &written, algorithm, nil)
        }
        // A digest of memory we hold cannot fail short of the library being broken;
        // an empty result then fails every comparison, which is closed, not open.
        guard ok == 1 else { return [] }
        return Array(output[0..<Int(written)])
    }
}
