internal import COpenSSL
import Synchronization

/// The ES256 keys with their tables (ES256Key) that this process built, shared by every
/// verifier, by the bytes of the public key: a verifier made for each request (as many
/// backends make one) finds the table of Apple's leaf of the day that an earlier verifier
/// built, instead of building it again for 25 ms and throwing it away with itself.
/// A table is only a faster way to the same answer (it is made from the public key alone),
/// so any certificate with that key may use it; one is built only where a bag whose chain
/// validated is checked a second time (CertificateBag.precomputedLeafKey). At most
/// `maxEntries` (about 150 KB each), the least recently used given up first.
enum ES256KeyTables {
    static let maxEntries = 32

    private struct Entry {
        let publicKey: [UInt8]
        let key: ES256Key
    }

    /// Least recently used first. A scan of at most 32 keys of 65 bytes costs less than hashing one.
    private static let entries = Mutex<[Entry]>([])

    /// The table of the certificate's public key, when one was built.
    static func shared(for certificate: X509Certificate) -> ES256Key? {
        guard let publicKey = publicKeyBytes(certificate) else { return nil }
        return entries.withLock { entries in take(publicKey, from: &entries) }
    }

    /// The table of the certificate's public key, built now unless one was; nil when the key is not P-256.
    static func built(for certificate: X509Certificate) -> ES256Key? {
        guard let publicKey = publicKeyBytes(certificate) else { return nil }
        if let known = entries.withLock({ take(publicKey, from: &$0) }) { return known }
        guard let key = ES256Key(certificate) else { return nil }  // built outside the lock: 25 ms
        return entries.withLock { entries in
            if let raced = take(publicKey, from: &entries) { return raced }  // another thread built it meanwhile
            if entries.count >= maxEntries { entries.removeFirst(entries.count - maxEntries + 1) }
            entries.append(Entry(publicKey: publicKey, key: key))
            return key
        }
    }

    /// How many tables the process holds (tests).
    static var count: Int { entries.withLock { $0.count } }

    /// The entry's key, moved to the most recently used end.
    private static func take(_ publicKey: [UInt8], from entries: inout [Entry]) -> ES256Key? {
        guard let index = entries.firstIndex(where: { $0.publicKey == publicKey }) else { return nil }
        let entry = entries.remove(at: index)
        entries.append(entry)
        return entry.key
    }

    /// The subjectPublicKey's bits as the certificate carries them (an EC point).
    private static func publicKeyBytes(_ certificate: X509Certificate) -> [UInt8]? {
        guard let bits = X509_get0_pubkey_bitstr(certificate.pointer), let data = ASN1_STRING_get0_data(bits) else {
            return nil
        }
        return Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(bits))))
    }
}
