#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The certificates a receipt carries, decoded once. Every App Store receipt signed
/// in a given period carries byte-identical certificates, so a verifier keeps the
/// bags whose chain it validated (ChainCache), keyed by these exact bytes.
///
/// Decoding a certificate (`d2i_X509`) is the dearest step of a first
/// verification, so a bag is decoded only after the checks that need no
/// decoding: at most `ParseLimits.maxCertificates`, no two identical, each DER,
/// the signer found by issuer and serial number on the raw bytes, and every
/// certificate on the signer's path by names. A bag of junk certificates costs
/// a few byte compares, never a decode.
final class CertificateBag: Sendable {
    /// What the verifier's cache knows the bag by: a receipt's certificates as they
    /// stand, back to back; a JWS's x5c text.
    let bytes: [UInt8]
    let certificates: [X509Certificate]
    let infos: [CertificateInfo]
    /// Each certificate's SHA-256, which is what a pin matches.
    let fingerprints: [[UInt8]]

    /// The first certificate's ES256 key with its table: the process's (ES256KeyTables,
    /// which outlive any verifier) when an earlier bag with the same key built one, else
    /// built on the bag's second ES256 check: only a cached bag (its chain validated) is
    /// checked twice, so a bag that signs once, or that anyone made up, never costs the
    /// table's 25 ms. Atomics, not a lock: every verifying thread passes here.
    private let leafKeyChecks = Atomic<Int>(0)
    private let leafKey = AtomicLazyReference<ES256Key>()

    /// The leaf's precomputed key when there is one, counting this check.
    func precomputedLeafKey() -> ES256Key? {
        if let key = leafKey.load() { return key }
        let checks = leafKeyChecks.add(1, ordering: .relaxed).newValue
        guard let key = checks == 2 ? ES256KeyTables.built(for: certificates[0])
                                    : ES256KeyTables.shared(for: certificates[0]) else {
            return nil
        }
        return leafKey.storeIfNil(key)
    }

    /// The first certificate's RSA key made ready (RSAPublicKey), nil when it is not
    /// RSA: receipts carry their signer first, and a cached bag's signer checks every
    /// receipt signed in its period. Made with the bag (a few µs, once per bag) so
    /// that a verdict reads a constant.
    let signerKey: RSAPublicKey?

    /// The RSA key of certificate `index`, nil when it is not RSA.
    func rsaKey(at index: Int) throws(ReceiptError) -> RSAPublicKey? {
        index == 0 ? signerKey : try RSAPublicKey(certificates[index], allowedBits: SignatureCheck.allowedModulusBits)
    }

    static let empty = CertificateBag(bytes: [], certificates: [], infos: [], fingerprints: [], signerKey: nil)

    private init(bytes: [UInt8], certificates: [X509Certificate], infos: [CertificateInfo], fingerprints: [[UInt8]],
                 signerKey: RSAPublicKey?) {
        self.bytes = bytes
        self.certificates = certificates
        self.infos = infos
        self.fingerprints = fingerprints
        self.signerKey = signerKey
    }

    /// Checks the undecoded certificates at `ranges` of `bytes` (see the type's
    /// documentation), then decodes them. `known`: certificates already decoded
    /// (a verifier's added anchors), reused for identical bytes.
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>, ranges: [Range<Int>], signer: SignerInfo,
                       signerBytes: UnsafeBufferPointer<UInt8>, maxDepth: Int,
                       known: [X509Certificate]) throws(ReceiptError) -> CertificateBag {
        let ders = ranges.map { Array(bytes[$0]) }
        let infos = try checkedInfos(ders, offsets: ranges.map(\.lowerBound), maxDepth: maxDepth)
        guard let signerIndex = index(in: infos, issuer: UnsafeBufferPointer(rebasing: signerBytes[signer.issuer]),
                                      serialNumber: UnsafeBufferPointer(rebasing: signerBytes[signer.serialNumber])) else {
            throw signerNotFound
        }
        try requireOnePath(infos, from: signerIndex)
        do throws(ReceiptError) {
            guard signerIndex == 0 else {
                throw ReceiptError(.notCanonical, at: ranges[0].lowerBound, "the signer is certificate \(signerIndex + 1); "
                                   + "receipts carry it first")
            }
            try requireIssuerOrder(infos)
        } catch {
            throw ReceiptError(.notCanonical, at: error.offset, error.detail + " (the form Apple writes: the signer, then its issuer, then the root)")
        }
        return try decodeChecked(Array(bytes), ders, infos, known: known)
    }

    /// A JWS header's `x5c`, leaf first: the same checks, the signer being the
    /// first certificate, and each certificate issued by the next (RFC 7515 §4.1.6),
    /// so that the chain's order is the one Apple writes. `key`: the bytes the
    /// verifier's cache knows the bag by (the x5c text). The caller has already
    /// refused more than `ParseLimits.maxCertificates`, before decoding any base64.
    static func decode(chain ders: [[UInt8]], key: [UInt8], known: [X509Certificate]) throws(ReceiptError) -> CertificateBag {
        let infos = try checkedInfos(ders, offsets: nil, maxDepth: 16)
        try requireOnePath(infos, from: 0)
        try requireIssuerOrder(infos)
        return try decodeChecked(key, ders, infos, known: known)
    }

    /// Each certificate issued (by name) by the next: the order of a JWS's x5c
    /// (RFC 7515 §4.1.6) and of every receipt's certificates, so that one set of
    /// certificates has one spelling.
    private static func requireIssuerOrder(_ infos: [CertificateInfo]) throws(ReceiptError) {
        for index in infos.indices.dropLast() where infos[index].issuerBytes != infos[index + 1].subjectBytes {
            throw ReceiptError(.unexpectedCertificates, "certificate \(index + 2) did not issue certificate \(index + 1): "
                               + "certificates run from the signing certificate to the root, each issued by the next")
        }
    }

    /// No certificate twice, each DER, and each one's names and extensions read.
    private static func checkedInfos(_ ders: [[UInt8]], offsets: [Int]?, maxDepth: Int) throws(ReceiptError) -> [CertificateInfo] {
        for (index, der) in ders.enumerated() where ders[..<index].contains(der) {
            throw ReceiptError(.duplicateCertificate, at: offsets?[index],
                               "certificate \(index + 1) repeats an earlier one byte for byte")
        }
        var infos: [CertificateInfo] = []
        for der in ders {
            try der.withUnsafeBufferPointer { (buffer) throws(ReceiptError) in
                try CanonicalForm.checkDER(certificate: buffer, maxDepth: maxDepth)
            }
            infos.append(try CertificateInfo(der))
        }
        return infos
    }

    /// Decodes certificates that passed every check above.
    private static func decodeChecked(_ bytes: [UInt8], _ ders: [[UInt8]], _ infos: [CertificateInfo],
                                      known: [X509Certificate]) throws(ReceiptError) -> CertificateBag {
        var certificates: [X509Certificate] = []
        var fingerprints: [[UInt8]] = []
        for der in ders {
            let fingerprint = Digest.sha256(der)
            if let held = known.first(where: { $0.der == der }) {
                certificates.append(held)
            } else if let pin = PinnedAnchor.allCases.first(where: { $0.sha256 == fingerprint }) {
                certificates.append(try DecodedPins.certificate(pin, der: der))
            } else {
                certificates.append(try X509Certificate(der: der))
            }
            fingerprints.append(fingerprint)
        }
        let signerKey = try certificates.first.flatMap { (signer) throws(ReceiptError) in
            try RSAPublicKey(signer, allowedBits: SignatureCheck.allowedModulusBits)
        }
        return CertificateBag(bytes: bytes, certificates: certificates, infos: infos, fingerprints: fingerprints,
                              signerKey: signerKey)
    }

    static let signerNotFound = ReceiptError(.signerNotFound,
                                             "no certificate in the receipt matches the SignerInfo's issuer and serial")

    /// Every certificate must lie on the path from the signer up through issuers
    /// named by subject, which OpenSSL's path building also requires: one that is
    /// not can only be padding, and is refused before anything is decoded. A path
    /// that breaks (an issuer missing) before a self-issued root leaves the rest
    /// unreachable: that is a chain that cannot be built.
    private static func requireOnePath(_ infos: [CertificateInfo], from signer: Int) throws(ReceiptError) {
        var onPath = [Bool](repeating: false, count: infos.count)
        var current = signer
        onPath[current] = true
        while !infos[current].isSelfIssued,
              let issuer = infos.indices.first(where: { !onPath[$0] && infos[$0].subjectBytes == infos[current].issuerBytes }) {
            onPath[issuer] = true
            current = issuer
        }
        guard let stray = onPath.firstIndex(of: false) else { return }
        if !infos[current].isSelfIssued {
            throw ReceiptError(.chainUntrusted, "the path from the signer breaks at certificate \(current + 1): its "
                               + "issuer is not in the receipt, so certificate \(stray + 1) cannot be reached")
        }
        throw ReceiptError(.unexpectedCertificates, "certificate \(stray + 1) of \(infos.count) is not on the "
                           + "signer's path to its root; receipts carry only that path")
    }

    /// Whether certificate `index` names itself as issuer: the only kind a pin can match.
    func isSelfIssued(_ index: Int) -> Bool { infos[index].isSelfIssued }

    /// The index of the certificate with this issuer and serial number (the PKCS #7 signer).
    func index(issuer: UnsafeBufferPointer<UInt8>, serialNumber: UnsafeBufferPointer<UInt8>) -> Int? {
        Self.index(in: infos, issuer: issuer, serialNumber: serialNumber)
    }

    private static func index(in infos: [CertificateInfo], issuer: UnsafeBufferPointer<UInt8>,
                              serialNumber: UnsafeBufferPointer<UInt8>) -> Int? {
        infos.firstIndex { info in
            info.encoded.withUnsafeBufferPointer { encoded in
                same(encoded, info.serialNumber, serialNumber) && same(encoded, info.issuer, issuer)
            }
        }
    }

    private static func same(_ encoded: UnsafeBufferPointer<UInt8>, _ range: Range<Int>,
                             _ wanted: UnsafeBufferPointer<UInt8>) -> Bool {
        range.count == wanted.count && (wanted.isEmpty || memcmp(encoded.baseAddress! + range.lowerBound,
                                                                  wanted.baseAddress!, wanted.count) == 0)
    }
}
