#if canImport(Glibc)
import Glibc
#endif

/// The one form in which a receipt verifies: the form Apple writes.
///
/// Nothing outside the payload and the certificates' signed parts is covered by
/// a signature, so without this check one genuine receipt could be re-sent in
/// endless distinct byte forms (another SignedData version, extra digest
/// algorithms, a `crls` field, junk after the signature, long-form lengths),
/// each verifying, which defeats any server that de-duplicates or blocks replays
/// by hashing the bytes. Parsing stays lenient; a verdict does not.
///
/// The form: SignedData version 1; `digestAlgorithms` holding exactly the
/// signer's digest algorithm; certificates in path order, the signer first and
/// each followed by its issuer (checked when the bag is decoded,
/// CertificateBag); no `crls`; one SignerInfo of version 1 whose algorithm
/// identifiers carry NULL parameters, whose signatureAlgorithm is rsaEncryption,
/// and which ends with its signature (no unsigned attributes, nothing after);
/// and DER throughout, definite minimal lengths and a primitive payload OCTET
/// STRING. Receipts that Xcode's StoreKit Testing certificate signed differ in
/// two ways, because Xcode writes them so: BER with indefinite lengths, and
/// signatureAlgorithm either rsaEncryption or shaXWithRSAEncryption (Xcode
/// versions differ). So an Xcode receipt has two accepted forms; an App Store
/// receipt one. The fingerprint (ContentFingerprint), not the bytes, is the key to
/// de-duplicate on in every case.
enum CanonicalForm {
    /// `signerFingerprint`: the SHA-256 of the signer's certificate, which decides
    /// whether BER is allowed. The certificates' own DER is checked when their bag
    /// is first decoded (`checkDER(certificate:)`), so the walk here skips them.
    static func check(_ encoded: UnsafeBufferPointer<UInt8>, container: SignedDataContainer, signer: SignerInfo,
                      signerFingerprint: [UInt8]) throws(ReceiptError) {
        do throws(ReceiptError) {
            try checkEnvelope(encoded, container: container, signer: signer, signerFingerprint: signerFingerprint)
        } catch {
            // Malformed BER met on the way is not a canonical form either: a verdict, never a parse status.
            throw error.asVerdict(.notCanonical, "the envelope")
        }
    }

    private static func checkEnvelope(_ encoded: UnsafeBufferPointer<UInt8>, container: SignedDataContainer,
                                      signer: SignerInfo, signerFingerprint: [UInt8]) throws(ReceiptError) {
        if container.isBER {
            guard signerFingerprint == PinnedAnchor.xcodeStoreKit.sha256 else {
                throw ReceiptError(.notCanonical, at: 1, "indefinite lengths (BER) are Xcode's form; a receipt "
                                   + "not signed by the StoreKit Testing certificate must be DER")
            }
        } else {
            // The signer's issuer Name is skipped too: the signer was found by it, byte for
            // byte, in a certificate whose DER was checked when its bag was decoded.
            try requireDER(encoded, 0..<encoded.count, depth: 0, maxDepth: container.maxDepth,
                           skipping: container.certificateSet, checkedName: signer.issuer)
        }
        guard isIntegerOne(encoded, container.version) else {
            throw ReceiptError(.notCanonical, at: container.version.lowerBound, "SignedData.version is not 1")
        }
        // The SET holds the signer's AlgorithmIdentifier, byte for byte, and nothing else.
        let digest = signer.digestAlgorithm, set = container.digestAlgorithms
        guard digest.count < 0x80, set.count == digest.count + 2, encoded[set.lowerBound] == BERTag.set,
              encoded[set.lowerBound + 1] == UInt8(digest.count),
              encoded[(set.lowerBound + 2)..<set.upperBound].elementsEqual(encoded[digest]) else {
            throw ReceiptError(.notCanonical, at: container.digestAlgorithms.lowerBound,
                               "SignedData.digestAlgorithms does not hold exactly the signer's digest algorithm")
        }
        if signer.signatureAlgorithmNamesDigest && signerFingerprint != PinnedAnchor.xcodeStoreKit.sha256 {
            throw ReceiptError(.notCanonical, at: signer.signatureAlgorithm.lowerBound,
                               "SignerInfo.signatureAlgorithm names the digest (shaXWithRSAEncryption); the App Store "
                               + "writes rsaEncryption (1.2.840.113549.1.1.1)")
        }
        guard !container.hasCRLs else {
            throw ReceiptError(.notCanonical, "SignedData carries crls [1]; receipts carry none")
        }
        guard isIntegerOne(encoded, signer.version) else {
            throw ReceiptError(.notCanonical, at: signer.version.lowerBound, "SignerInfo.version is not 1")
        }
        try requireNullParameters(encoded, signer.digestAlgorithm, "digestAlgorithm")
        try requireNullParameters(encoded, signer.signatureAlgorithm, "signatureAlgorithm")
        guard !signer.hasTrailingFields else {
            throw ReceiptError(.notCanonical, at: signer.signature.upperBound,
                               "the SignerInfo goes on after its signature (unsigned attributes or junk)")
        }
    }

    /// SEQUENCE { OID, NULL }: the OID's length octet (the fourth) leaves room for exactly the NULL.
    private static func requireNullParameters(_ encoded: UnsafeBufferPointer<UInt8>, _ range: Range<Int>,
                                              _ name: StaticString) throws(ReceiptError) {
        guard range.count >= 6, encoded[range.upperBound - 2] == BERTag.null, encoded[range.upperBound - 1] == 0,
              encoded[range.lowerBound + 3] == range.count - 6 else {
            throw ReceiptError(.notCanonical, at: range.lowerBound, "SignerInfo.\(name) does not have NULL parameters")
        }
    }

    /// A certificate must be DER, as X.509 requires; checked once per new bag.
    static func checkDER(certificate: UnsafeBufferPointer<UInt8>, maxDepth: Int) throws(ReceiptError) {
        do throws(ReceiptError) {
            try requireDER(certificate, 0..<certificate.count, depth: 0, maxDepth: maxDepth, skipping: nil, checkedName: nil)
        } catch {
            throw error.asVerdict(.notCanonical, "a certificate")
        }
    }

    /// Every element in `range`, and those inside constructed ones (but for the
    /// content range `skipping` and the element `checkedName`), is DER: a definite length in its shortest form, and
    /// no constructed OCTET STRING (X.690 §10). Primitive contents are not entered:
    /// the payload's is signed, and that is the signature's business. Headers are
    /// read as everywhere else: BERElement's fast path, and BERReader for the rest,
    /// which also names what is malformed.
    private static func requireDER(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, depth: Int, maxDepth: Int,
                                   skipping: Range<Int>?, checkedName: Range<Int>?) throws(ReceiptError) {
        guard depth <= maxDepth else {
            throw ReceiptError(.nestingTooDeep, at: range.lowerBound, "elements nest deeper than \(maxDepth) levels")
        }
        var position = range.lowerBound
        while position < range.upperBound {
            let element: BERElement
            if let definite = BERElement.definite(in: bytes, at: position, end: range.upperBound) {
                element = definite
            } else {
                var reader = BERReader(bytes: bytes, range: position..<range.upperBound, depth: depth, maxDepth: maxDepth)
                guard let read = try reader.next() else { break }
                element = read
            }
            guard !element.isIndefinite else { throw notDER(element, "an indefinite length") }
            guard element.contentStart - element.start == shortestHeader(element.contentLength) else {
                throw notDER(element, "a length not in its shortest form")
            }
            guard element.tag != BERTag.constructedOctetString else { throw notDER(element, "a constructed OCTET STRING") }
            if element.tag & 0x20 != 0 && element.contentRange != skipping && element.encodedRange != checkedName {
                try requireDER(bytes, element.contentRange, depth: depth + 1, maxDepth: maxDepth, skipping: skipping,
                               checkedName: checkedName)
            }
            position = element.end
        }
    }

    /// Tag and length octets of a DER header for content of `length` bytes.
    private static func shortestHeader(_ length: Int) -> Int {
        length < 0x80 ? 2 : 2 + (Int.bitWidth - length.leadingZeroBitCount + 7) / 8
    }

    private static func notDER(_ element: BERElement, _ what: String) -> ReceiptError {
        ReceiptError(.notCanonical, at: element.start, "not DER: \(what)")
    }

    /// INTEGER 1, the only version either structure may have (compared in place: no array per check).
    private static func isIntegerOne(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        range.count == 3 && bytes[range.lowerBound] == BERTag.integer && bytes[range.lowerBound + 1] == 1
            && bytes[range.lowerBound + 2] == 1
    }
}
