internal import COpenSSL

/// HMAC-SHA256 (RFC 2104), libcrypto's one-shot HMAC: what the Standard Webhooks
/// signature of an event is made of.
enum HMACSHA256 {
    static func mac(key: [UInt8], message: [UInt8]) throws(ReceiptError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let made = key.withUnsafeBufferPointer { keyBytes in
            message.withUnsafeBufferPointer { messageBytes in
                HMAC(EVP_sha256(), keyBytes.baseAddress, Int32(keyBytes.count), messageBytes.baseAddress, messageBytes.count,
                     &output, &length)
            }
        }
        guard made != nil, length == 32 else {
            OpenSSLErrors.clear()
            throw ReceiptError(.cryptoFailure, "OpenSSL's HMAC-SHA256 failed")
        }
        return Array(output.prefix(32))
    }
}
