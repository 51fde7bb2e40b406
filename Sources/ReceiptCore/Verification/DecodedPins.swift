import Synchronization

/// The pinned anchors' certificates, decoded once per process. A pin fixes their
/// bytes exactly (its SHA-256), so every receipt carrying one carries the same
/// certificate, and decoding it again, which OpenSSL 3.0 makes the dearest step of
/// a first verification, would give the same X509. Whether to trust it is still
/// each verifier's decision.
enum DecodedPins {
    private static let decoded = Mutex<[PinnedAnchor: X509Certificate]>([:])

    static func certificate(_ pin: PinnedAnchor, der: [UInt8]) throws(ReceiptError) -> X509Certificate {
        if let known = decoded.withLock({ $0[pin] }) { return known }
        let certificate = try X509Certificate(der: der)
        return decoded.withLock { decoded in
            if let raced = decoded[pin] { return raced }  // another thread decoded it meanwhile: keep one
            decoded[pin] = certificate
            return certificate
        }
    }
}
