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
/// signer's digest algorithm; no `crls`; one SignerInfo of version 1 whose
/// algorithm identifiers carry NULL parameters and which ends with its
/// signature (no unsigned attributes, nothing after); and DER throughout,
/// definite minimal lengths and a primitive payload OCTET STRING, except in
/// receipts that Xcode's StoreKit Testing certificate signed, which Xcode writes
/// in BER with indefinite lengths.
enum CanonicalForm {
    /// `signerFingerprint`: the SHA-256 of the signer's certificate, which decides
    /// whether BER is allowed. The certificates' own DER is checked when their bag
    /// is first decoded (`checkDER(certificate:)`), so the walk here skips them.
    static func check(_ encoded: UnsafeBufferPointer<UInt8>, container: SignedDataContainer, signer: SignerInfo,
                      signerFingerprint: [UInt8]) throws(ReceiptError) {
        if container.isBER {
            guard signerFingerprint == PinnedAnchor.xcodeStoreKit.sha256 else {
                throw ReceiptError(.notCanonical, at: 1, "indefinite lengths (BER) are Xcode's form; a receipt "
                                   + "not signed by the StoreKit Testing certificate must be DER")
            }
        } else {
            let walk = DERWalk(bytes: encoded, skipping: container.certificateSet, maxDepth: container.maxDepth)
            try walk.check(0..<encoded.count, depth: 0)
        }
        guard same(encoded, container.version, [BERTag.integer, 1, 1]) else {
            throw ReceiptError(.notCanonical, at: container.version.lowerBound, "SignedData.version is not 1")
        }
        let digest = UnsafeBufferPointer(rebasing: encoded[signer.digestAlgorithm])
        guard container.digestAlgorithms.count == digest.count + 2, digest.count < 0x80,
              same(encoded, container.digestAlgorithms.prefix(2), [BERTag.set, UInt8(digest.count)]),
              memcmp(encoded.baseAddress! + container.digestAlgorithms.lowerBound + 2, digest.baseAddress!, digest.count) == 0 else {
            throw ReceiptError(.notCanonical, at: container.digestAlgorithms.lowerBound,
                               "SignedData.digestAlgorithms does not hold exactly the signer's digest algorithm")
        }
        guard !container.hasCRLs else {
            throw ReceiptError(.notCanonical, "SignedData carries crls [1]; receipts carry none")
        }
        guard same(encoded, signer.version, [BERTag.integer, 1, 1]) else {
            throw ReceiptError(.notCanonical, at: signer.version.lowerBound, "SignerInfo.version is not 1")
        }
        for (range, name) in [(signer.digestAlgorithm, "digestAlgorithm"), (signer.signatureAlgorithm, "signatureAlgorithm")] {
            guard range.count >= 4, same(encoded, (range.upperBound - 2)..<range.upperBound, [BERTag.null, 0]),
                  encoded[range.lowerBound + 3] == range.count - 6 else {
                throw ReceiptError(.notCanonical, at: range.lowerBound, "SignerInfo.\(name) does not have NULL parameters")
            }
        }
        guard !signer.hasTrailingFields else {
            throw ReceiptError(.notCanonical, at: signer.signature.upperBound,
                               "the SignerInfo goes on after its signature (unsigned attributes or junk)")
        }
    }

    /// A certificate must be DER, as X.509 requires; checked once per new bag.
    static func checkDER(certificate: UnsafeBufferPointer<UInt8>, maxDepth: Int) throws(ReceiptError) {
        let walk = DERWalk(bytes: certificate, skipping: nil, maxDepth: maxDepth)
        try walk.check(0..<certificate.count, depth: 0)
    }

    private static func same(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ expected: [UInt8]) -> Bool {
        range.count == expected.count && zip(bytes[range], expected).allSatisfy { $0 == $1 }
    }
}

/// Walks every constructed element and checks that each length is definite and
/// minimal, and that no string is constructed: what DER (X.690 §10) adds to BER.
/// Primitive contents are not entered: the payload's is signed, and that is
/// the signature's business.
private struct DERWalk {
    let bytes: UnsafeBufferPointer<UInt8>
    let skipping: Range<Int>?
    let maxDepth: Int

    func check(_ range: Range<Int>, depth: Int) throws(ReceiptError) {
        guard depth <= maxDepth else { throw ReceiptError(.nestingTooDeep, at: range.lowerBound, "nesting past \(maxDepth)") }
        var position = range.lowerBound
        while position < range.upperBound {
            let start = position
            guard range.upperBound - position >= 2 else { throw notDER(at: start, "an element is cut short") }
            let tag = bytes[position]
            let first = bytes[position + 1]
            position += 2
            var length = Int(first)
            if first >= 0x80 {
                let octets = Int(first & 0x7F)
                guard (1...4).contains(octets), range.upperBound - position >= octets else {
                    throw notDER(at: start, first == 0x80 ? "an indefinite length" : "a length of \(octets) octets")
                }
                length = 0
                for _ in 0..<octets {
                    length = length << 8 | Int(bytes[position])
                    position += 1
                }
                guard length >= 0x80, bytes[start + 2] != 0 else { throw notDER(at: start, "a length not in its shortest form") }
            }
            guard length <= range.upperBound - position else { throw notDER(at: start, "a length past its enclosing element") }
            let content = position..<(position + length)
            if tag == BERTag.constructedOctetString { throw notDER(at: start, "a constructed OCTET STRING") }
            if tag & 0x20 != 0 && content != skipping { try check(content, depth: depth + 1) }
            position = content.upperBound
        }
    }

    private func notDER(at offset: Int, _ what: String) -> ReceiptError {
        ReceiptError(.notCanonical, at: offset, "not DER: \(what)")
    }
}
