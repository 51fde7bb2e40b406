/// The one SignerInfo of a receipt's SignedData: which certificate signed, with
/// which digest, and the signature bytes. Ranges are into the receipt's encoding.
struct SignerInfo {
    let issuer: Range<Int>
    let serialNumber: Range<Int>
    let digest: DigestAlgorithm
    let signature: Range<Int>
    /// For the canonical-form check (CanonicalForm): the version INTEGER and the
    /// digestAlgorithm AlgorithmIdentifier as whole elements, and whether anything
    /// (unsigned attributes, junk) follows the signature.
    let version: Range<Int>
    let digestAlgorithm: Range<Int>
    let signatureAlgorithm: Range<Int>
    /// Whether signatureAlgorithm is shaXWithRSAEncryption rather than rsaEncryption:
    /// the App Store writes only the latter; some Xcode versions the former.
    let signatureAlgorithmNamesDigest: Bool
    let hasTrailingFields: Bool

    /// Reads `signerInfos` and insists on exactly one signer, RSA PKCS #1 v1.5 with
    /// SHA-1 or SHA-256, and no signed attributes: the shape of every App Store and
    /// Xcode receipt. Anything else is refused, not guessed at.
    static func read(_ bytes: UnsafeBufferPointer<UInt8>, signerInfos range: Range<Int>) throws(ReceiptError) -> SignerInfo {
        var top = BERReader(bytes: bytes, range: range, maxDepth: 16)
        let set = try top.next(expecting: BERTag.set, "signerInfos")
        var signers = top.children(of: set)
        guard let first = try signers.next() else {
            throw ReceiptError(.signerNotFound, at: set.start, "the receipt has no SignerInfo: nobody signed it")
        }
        if try signers.next() != nil {
            throw ReceiptError(.unsupportedSignature, at: set.start, "more than one SignerInfo; receipts have exactly one")
        }
        guard first.tag == BERTag.sequence else {
            throw ReceiptError(.unexpectedTag, at: first.start, "SignerInfo is not a SEQUENCE")
        }
        var fields = signers.children(of: first)
        let version = try fields.next(expecting: BERTag.integer, "SignerInfo.version")
        let identifier = try fields.next(expecting: BERTag.sequence, "SignerInfo.issuerAndSerialNumber")
        var identifierParts = fields.children(of: identifier)
        let issuer = try identifierParts.next(expecting: BERTag.sequence, "issuer")
        let serial = try identifierParts.next(expecting: BERTag.integer, "serialNumber")

        let digestAlgorithm = try fields.next(expecting: BERTag.sequence, "SignerInfo.digestAlgorithm")
        let digestOID = try algorithm(digestAlgorithm, in: fields, "SignerInfo.digestAlgorithm")
        let digest: DigestAlgorithm
        if same(bytes, digestOID, ObjectIdentifiers.sha1) {
            digest = .sha1
        } else if same(bytes, digestOID, ObjectIdentifiers.sha256) {
            digest = .sha256
        } else {
            throw ReceiptError(.unsupportedDigest, at: identifier.end,
                               "digest algorithm \(dotted(Array(bytes[digestOID]))) is not SHA-1 or SHA-256")
        }
        guard let next = try fields.next() else {
            throw ReceiptError(.truncated, at: first.end, "SignerInfo ends before its signature algorithm")
        }
        if next.tag == BERTag.contextConstructed0 {
            throw ReceiptError(.unsupportedSignature, at: next.start,
                               "signed attributes are present; App Store and Xcode receipts carry none")
        }
        var rest = fields
        let signatureOID = try algorithm(next, in: fields, "SignerInfo.signatureAlgorithm")
        let expected = digest == .sha1 ? ObjectIdentifiers.sha1WithRSAEncryption : ObjectIdentifiers.sha256WithRSAEncryption
        let plainRSA = same(bytes, signatureOID, ObjectIdentifiers.rsaEncryption)
        guard plainRSA || same(bytes, signatureOID, expected) else {
            throw ReceiptError(.unsupportedDigest, at: next.start,
                               "signature algorithm \(dotted(Array(bytes[signatureOID]))) does not match RSA with \(digest.name)")
        }
        let signature = try rest.next(expecting: BERTag.octetString, "SignerInfo.signature")
        return SignerInfo(issuer: issuer.encodedRange, serialNumber: serial.encodedRange, digest: digest,
                          signature: signature.contentRange, version: version.encodedRange,
                          digestAlgorithm: digestAlgorithm.encodedRange, signatureAlgorithm: next.encodedRange,
                          signatureAlgorithmNamesDigest: !plainRSA,
                          hasTrailingFields: !rest.isAtEnd)
    }

    /// Where the OID of an AlgorithmIdentifier is: compared in place, since a verdict
    /// reads two of them and a copy each would be an allocation each.
    private static func algorithm(_ element: BERElement, in reader: BERReader, _ what: String) throws(ReceiptError) -> Range<Int> {
        guard element.tag == BERTag.sequence else {
            throw ReceiptError(.unexpectedTag, at: element.start, "\(what) is not an AlgorithmIdentifier")
        }
        var parts = reader.children(of: element)
        let oid = try parts.next(expecting: BERTag.objectIdentifier, what)
        return oid.contentRange
    }

    private static func same(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ oid: [UInt8]) -> Bool {
        SignedDataReader.equals(bytes, range, oid)
    }

    static func dotted(_ oid: [UInt8]) -> String {
        guard let first = oid.first else { return "(empty)" }
        var arcs = [String(first / 40), String(first % 40)]
        var value: UInt64 = 0
        for byte in oid.dropFirst() {
            value = value << 7 | UInt64(byte & 0x7F)
            if byte & 0x80 == 0 { arcs.append(String(value)); value = 0 }
        }
        return arcs.joined(separator: ".")
    }
}
