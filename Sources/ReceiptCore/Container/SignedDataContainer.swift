#if canImport(Glibc)
import Glibc
#endif

/// What the PKCS #7 (RFC 2315) wrapper holds, located without decoding any
/// certificate: the payload, the declared digest algorithms, each certificate's
/// encoding and the SignerInfos. Verification decodes those later, and only then.
struct SignedDataContainer: Sendable {
    /// Ranges into the receipt's encoding. The certificates' content range of
    /// `[0] IMPLICIT SET OF Certificate`, checked to hold only SEQUENCEs and listed
    /// by `certificateRanges` when verification needs them, which spares every
    /// parse an array.
    var certificateSet: Range<Int> = 0..<0
    var signerInfos: Range<Int> = 0..<0
    var isBER = false
    var maxDepth = 0

    /// Each certificate's encoding, in receipt order.
    func certificateRanges(in bytes: UnsafeBufferPointer<UInt8>) -> [Range<Int>] {
        var reader = BERReader(bytes: bytes, range: certificateSet, maxDepth: maxDepth,
                               indefiniteEnds: isBER ? IndefiniteEndMemo() : nil)
        var ranges: [Range<Int>] = []
        while let certificate = try? reader.next() { ranges.append(certificate.encodedRange) }
        return ranges
    }
}

/// Object identifiers as their DER content octets, so that matching is a byte compare.
enum ObjectIdentifiers {
    static let signedData = encode("1.2.840.113549.1.7.2")
    static let data = encode("1.2.840.113549.1.7.1")
    static let sha1 = encode("1.3.14.3.2.26")
    static let sha256 = encode("2.16.840.1.101.3.4.2.1")
    static let rsaEncryption = encode("1.2.840.113549.1.1.1")
    static let sha1WithRSAEncryption = encode("1.2.840.113549.1.1.5")
    static let sha256WithRSAEncryption = encode("1.2.840.113549.1.1.11")
    static let certificatePolicies = encode("2.5.29.32")
    /// Apple's WWDR intermediate marker (SPEC §3), carried as an extension.
    static let appleIntermediateMarker = encode("1.2.840.113635.100.6.2.1")
    /// Apple's receipt-signing leaf marker (SPEC §3).
    static let appleReceiptSigningMarker = encode("1.2.840.113635.100.6.11.1")

    static func encode(_ dotted: String) -> [UInt8] {
        let arcs = dotted.split(separator: ".").map { UInt64($0)! }
        var bytes = [UInt8(arcs[0] * 40 + arcs[1])]
        for arc in arcs.dropFirst(2) {
            var base128 = [UInt8(arc & 0x7F)]
            var rest = arc >> 7
            while rest > 0 {
                base128.insert(UInt8(rest & 0x7F) | 0x80, at: 0)
                rest >>= 7
            }
            bytes += base128
        }
        return bytes
    }
}

enum SignedDataReader {
    /// Walks ContentInfo → SignedData and returns the container and where the payload is.
    static func read(_ bytes: UnsafeBufferPointer<UInt8>,
                     maxDepth: Int) throws(ReceiptError) -> (SignedDataContainer, PayloadLocation) {
        var container = SignedDataContainer()
        container.maxDepth = maxDepth
        let isBER = bytes.count > 1 && bytes[1] == 0x80
        var top = BERReader(bytes: bytes, range: 0..<bytes.count, maxDepth: maxDepth,
                            indefiniteEnds: isBER ? IndefiniteEndMemo() : nil)
        let contentInfo = try top.next(expecting: BERTag.sequence, "ContentInfo")
        if !top.isAtEnd {
            throw ReceiptError(.trailingData, at: top.position,
                               "\(bytes.count - top.position) bytes follow the end of the receipt")
        }
        container.isBER = contentInfo.isIndefinite

        var info = top.children(of: contentInfo)
        let contentType = try info.next(expecting: BERTag.objectIdentifier, "ContentInfo.contentType")
        guard equals(bytes, contentType.contentRange, ObjectIdentifiers.signedData) else {
            throw ReceiptError(.notSignedData, at: contentType.start, "contentType is not 1.2.840.113549.1.7.2 (signedData)")
        }
        let explicitContent = try info.next(expecting: BERTag.contextConstructed0, "ContentInfo.content [0]")
        try info.expectEnd("ContentInfo.content")

        var wrapper = info.children(of: explicitContent)
        let signedData = try wrapper.next(expecting: BERTag.sequence, "SignedData")
        try wrapper.expectEnd("SignedData")

        var fields = wrapper.children(of: signedData)
        _ = try fields.next(expecting: BERTag.integer, "SignedData.version")
        // Only a hint: verification uses the SignerInfo's own digestAlgorithm.
        _ = try fields.next(expecting: BERTag.set, "SignedData.digestAlgorithms")

        let payload = try readEncapsulatedContent(&fields, bytes: bytes)

        var next = try fields.next()
        if let certificates = next, certificates.tag == BERTag.contextConstructed0 {
            var certificateReader = fields.children(of: certificates)
            while let certificate = try certificateReader.next() {
                guard certificate.tag == BERTag.sequence else {
                    throw ReceiptError(.unexpectedTag, at: certificate.start, "a certificate is not a SEQUENCE")
                }
            }
            container.certificateSet = certificates.contentRange
            next = try fields.next()
        }
        if let crls = next, crls.tag == BERTag.contextConstructed1 {
            next = try fields.next()
        }
        guard let signerInfos = next else {
            throw ReceiptError(.truncated, at: fields.position, "SignedData.signerInfos is missing")
        }
        guard signerInfos.tag == BERTag.set else {
            throw ReceiptError(.unexpectedTag, at: signerInfos.start,
                               "SignedData.signerInfos: expected SET (0x31), found \(BERTag.describe(signerInfos.tag))")
        }
        try fields.expectEnd("SignedData.signerInfos")
        container.signerInfos = signerInfos.encodedRange
        return (container, payload)
    }

    /// ContentInfo { data, [0] EXPLICIT OCTET STRING }; the OCTET STRING may be
    /// constructed (Xcode), in which case its primitive chunks are joined.
    private static func readEncapsulatedContent(_ fields: inout BERReader,
                                                bytes: UnsafeBufferPointer<UInt8>) throws(ReceiptError) -> PayloadLocation {
        let encapsulated = try fields.next(expecting: BERTag.sequence, "SignedData.contentInfo")
        var parts = fields.children(of: encapsulated)
        let contentType = try parts.next(expecting: BERTag.objectIdentifier, "contentInfo.contentType")
        guard equals(bytes, contentType.contentRange, ObjectIdentifiers.data) else {
            throw ReceiptError(.notDataContent, at: contentType.start, "the signed content is not 1.2.840.113549.1.7.1 (data)")
        }
        guard let explicitContent = try parts.next() else {
            throw ReceiptError(.missingContent, at: encapsulated.start, "the signed content is detached: there is no payload")
        }
        guard explicitContent.tag == BERTag.contextConstructed0 else {
            throw ReceiptError(.unexpectedTag, at: explicitContent.start,
                               "contentInfo.content: expected [0], found \(BERTag.describe(explicitContent.tag))")
        }
        try parts.expectEnd("contentInfo.content")
        var inner = parts.children(of: explicitContent)
        guard let octets = try inner.next() else {
            throw ReceiptError(.missingContent, at: explicitContent.start, "contentInfo.content [0] is empty")
        }
        try inner.expectEnd("the payload OCTET STRING")
        switch octets.tag {
        case BERTag.octetString:
            return .inside(octets.contentRange)
        case BERTag.constructedOctetString:
            var chunks: [Range<Int>] = []
            try collectChunks(of: octets, reader: inner, into: &chunks)
            // Xcode writes the whole payload as one chunk: then it can stay where it is.
            if chunks.count == 1 { return .inside(chunks[0]) }
            var joined = [UInt8]()
            joined.reserveCapacity(chunks.reduce(0) { $0 + $1.count })
            for chunk in chunks { joined.append(contentsOf: bytes[chunk]) }
            return .joined(joined)
        default:
            throw ReceiptError(.unexpectedTag, at: octets.start,
                               "the payload: expected OCTET STRING, found \(BERTag.describe(octets.tag))")
        }
    }

    private static func collectChunks(of octets: BERElement, reader: BERReader,
                                      into ranges: inout [Range<Int>]) throws(ReceiptError) {
        var chunks = reader.children(of: octets)
        while let chunk = try chunks.next() {
            switch chunk.tag {
            case BERTag.octetString:
                ranges.append(chunk.contentRange)
            case BERTag.constructedOctetString:
                try collectChunks(of: chunk, reader: chunks, into: &ranges)
            default:
                throw ReceiptError(.unexpectedTag, at: chunk.start,
                                   "a payload chunk: expected OCTET STRING, found \(BERTag.describe(chunk.tag))")
            }
        }
    }

    static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ expected: [UInt8]) -> Bool {
        range.count == expected.count && expected.withUnsafeBufferPointer { wanted in
            memcmp(bytes.baseAddress! + range.lowerBound, wanted.baseAddress!, range.count) == 0
        }
    }
}
