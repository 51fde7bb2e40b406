#if canImport(Glibc)
import Glibc
#endif

/// The certificates a receipt carries, decoded once. Every App Store receipt signed
/// in a given period carries byte-identical certificates, so a verifier keeps the
/// bags it has seen (ChainCache) keyed by these exact bytes.
final class CertificateBag: Sendable {
    /// The certificates' encodings as they stand, back to back, in the receipt.
    let bytes: [UInt8]
    let certificates: [X509Certificate]
    let infos: [CertificateInfo]

    init(_ bytes: [UInt8], ranges: [Range<Int>]) throws(ReceiptError) {
        self.bytes = bytes
        var certificates: [X509Certificate] = []
        var infos: [CertificateInfo] = []
        for range in ranges {
            let der = Array(bytes[range])
            certificates.append(try X509Certificate(der: der))
            infos.append(try CertificateInfo(der))
        }
        self.certificates = certificates
        self.infos = infos
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
