#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The certificates a receipt carries, decoded once. Every App Store receipt signed
/// in a given period carries byte-identical certificates, so a verifier keeps the
/// bags it has seen (ChainCache) keyed by these exact bytes.
final class CertificateBag: Sendable {
    /// The certificates' encodings as they stand, back to back, in the receipt.
    let bytes: [UInt8]
    let certificates: [X509Certificate]
    let infos: [CertificateInfo]
    /// Each certificate's SHA-256, which is what a pin matches.
    let fingerprints: [[UInt8]]

    /// `known`: certificates already decoded (a verifier's added anchors), reused
    /// for identical bytes instead of being decoded again.
    init(_ bytes: [UInt8], ranges: [Range<Int>], known: [X509Certificate] = []) throws(ReceiptError) {
        self.bytes = bytes
        var certificates: [X509Certificate] = []
        var infos: [CertificateInfo] = []
        var fingerprints: [[UInt8]] = []
        for range in ranges {
            let der = Array(bytes[range])
            let fingerprint = Digest.sha256(der)
            if let held = known.first(where: { $0.der == der }) {
                certificates.append(held)
            } else if let pin = PinnedAnchor.allCases.first(where: { $0.sha256 == fingerprint }) {
                certificates.append(try DecodedPins.certificate(pin, der: der))
            } else {
                certificates.append(try X509Certificate(der: der))
            }
            infos.append(try CertificateInfo(der))
            fingerprints.append(fingerprint)
        }
        self.certificates = certificates
        self.infos = infos
        self.fingerprints = fingerprints
    }

    /// Whether certificate `index` names itself as issuer: the only kind a pin can match.
    func isSelfIssued(_ index: Int) -> Bool {
        let info = infos[index]
        return info.encoded[info.issuer] == info.encoded[info.subject]
    }

    /// The index of the certificate with this issuer and serial number (the PKCS #7 signer).
    func index(issuer: UnsafeBufferPointer<UInt8>, serialNumber: UnsafeBufferPointer<UInt8>) -> Int? {
        infos.firstIndex { info in
            info.encoded.withUnsafeBufferPointer { encoded in
                same(encoded, info.serialNumber, serialNumber) && same(encoded, info.issuer, issuer)
            }
        }
    }

    private func same(_ encoded: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ wanted: UnsafeBufferPointer<UInt8>) -> Bool {
        range.count == wanted.count && (wanted.isEmpty || memcmp(encoded.baseAddress! + range.lowerBound,
                                                                  wanted.baseAddress!, wanted.count) == 0)
    }
}

/// What a chain validation established, and the window of creation dates over
/// which it holds: path validation depends on time only through the validity of
/// the certificates on the path, so inside the intersection of their windows the
/// answer cannot change. The window excludes its end points, leaving the boundary
/// seconds to a full validation.
struct ValidatedChain: Sendable {
    let certificates: [X509Certificate]
    let pin: PinnedAnchor?
    let anchorName: String
    let notBefore: Int64
    let notAfter: Int64
    let intermediateMarker: StepOutcome
    let leafMarker: StepOutcome

    func holds(atEpochSeconds seconds: Int64) -> Bool { notBefore < seconds && seconds < notAfter }
}

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
