internal import COpenSSL

/// A random (version 4) UUID in lower-case text, from OpenSSL's CSPRNG: the
/// nonces of signed requests, which Apple wants new for each signature.
enum RandomUUID {
    static func make() throws(ReceiptError) -> String {
        var bytes = [UInt8](repeating: 0, count: 16)
        guard RAND_bytes(&bytes, 16) == 1 else {
            OpenSSLErrors.clear()
            throw ReceiptError(.cryptoFailure, "OpenSSL's random generator failed")
        }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = Array(hexString(bytes).utf8)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(decoding: hex[$0], as: UTF8.self) }.joined(separator: "-")
    }
}

extension ES256Signature {
    /// r‖s (64 bytes) as a DER ECDSA-Sig-Value (SEQUENCE of two INTEGERs), the
    /// form of original promotional-offer signatures.
    static func der(_ raw: [UInt8]) -> [UInt8] {
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var value = Array(bytes.drop { $0 == 0 })
            if value.isEmpty || value[0] & 0x80 != 0 { value.insert(0, at: 0) }
            return [0x02, UInt8(value.count)] + value
        }
        let body = integer(raw[0..<32]) + integer(raw[32..<64])
        return [0x30, UInt8(body.count)] + body
    }
}
