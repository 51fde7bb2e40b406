#if canImport(Glibc)
import Glibc
#endif

/// What the PKCS #7 (RFC 2315) wrapper holds, located without decoding any
/// certificate: the payload, the declared digest algorithms, each certificate's
/// encoding and the SignerInfos. Verification decodes those later, and only then.
struct SignedDataContainer: Sendable, Equatable {
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
        if let walked = readPlainDER(bytes, maxDepth: maxDepth) {
            // Debug builds (the test suites) check the shortcut against the general walk.
            assert((try? readReportingErrors(bytes, maxDepth: maxDepth)).map { $0 == walked } == true,
                   "the DER shortcut disagrees with the general walk")
            return walked
        }
        return try readReportingErrors(bytes, maxDepth: maxDepth)
    }

    /// The hot path, for App Store receipts: DER with every element where the
    /// grammar puts it, read in one straight pass. Nil for anything else (BER,
    /// chunks, an unexpected tag or length, a depth limit below the container's
    /// own depth), which the general reader then accepts or names precisely. It
    /// accepts nothing the general reader would refuse.
    private static func readPlainDER(_ bytes: UnsafeBufferPointer<UInt8>,
                                     maxDepth: Int) -> (SignedDataContainer, PayloadLocation)? {
        func element(at start: Int, end: Int, tag: UInt8) -> BERElement? {
            guard let element = BERElement.definite(in: bytes, at: start, end: end) ?? longForm(at: start, end: end),
                  element.tag == tag else { return nil }
            return element
        }
        /// Lengths of three or four octets, which receipts over 64 KiB use.
        func longForm(at start: Int, end: Int) -> BERElement? {
            guard end &- start >= 6, bytes[start] & 0x1F != 0x1F else { return nil }
            let octets = Int(bytes[start &+ 1]) &- 0x80
            guard octets == 3 || octets == 4, end &- start >= 2 &+ octets else { return nil }
            var length = 0
            for index in (start &+ 2)..<(start &+ 2 &+ octets) { length = length &<< 8 | Int(bytes[index]) }
            let contentStart = start &+ 2 &+ octets
            guard length <= end &- contentStart else { return nil }
            return BERElement(tag: bytes[start], start: start, contentStart: contentStart,
                              contentEnd: contentStart &+ length, end: contentStart &+ length, isIndefinite: false)
        }
        guard maxDepth >= 6,
              let contentInfo = element(at: 0, end: bytes.count, tag: BERTag.sequence), contentInfo.end == bytes.count,
              let contentType = element(at: contentInfo.contentStart, end: contentInfo.contentEnd, tag: BERTag.objectIdentifier),
              equals(bytes, contentType.contentRange, ObjectIdentifiers.signedData),
              let explicit = element(at: contentType.end, end: contentInfo.contentEnd, tag: BERTag.contextConstructed0),
              explicit.end == contentInfo.contentEnd,
              let signedData = element(at: explicit.contentStart, end: explicit.contentEnd, tag: BERTag.sequence),
              signedData.end == explicit.contentEnd,
              let version = element(at: signedData.contentStart, end: signedData.contentEnd, tag: BERTag.integer),
              let digests = element(at: version.end, end: signedData.contentEnd, tag: BERTag.set),
              let encapsulated = element(at: digests.end, end: signedData.contentEnd, tag: BERTag.sequence),
              let dataType = element(at: encapsulated.contentStart, end: encapsulated.contentEnd, tag: BERTag.objectIdentifier),
              equals(bytes, dataType.contentRange, ObjectIdentifiers.data),
              let content = element(at: dataType.end, end: encapsulated.contentEnd, tag: BERTag.contextConstructed0),
              content.end == encapsulated.contentEnd,
              let octets = element(at: content.contentStart, end: content.contentEnd, tag: BERTag.octetString),
              octets.end == content.contentEnd else { return nil }
        var container = SignedDataContainer()
        container.maxDepth = maxDepth
        var next = encapsulated.end
        if next < signedData.contentEnd, bytes[next] == BERTag.contextConstructed0 {
            guard let certificates = element(at: next, end: signedData.contentEnd, tag: BERTag.contextConstructed0) else {
                return nil
            }
            var position = certificates.contentStart
            while position < certificates.contentEnd {
                guard let certificate = element(at: position, end: certificates.contentEnd, tag: BERTag.sequence) else {
                    return nil
                }
                position = certificate.end
            }
            container.certificateSet = certificates.contentRange
            next = certificates.end
        }
        if next < signedData.contentEnd, bytes[next] == BERTag.contextConstructed1 {
            guard let crls = element(at: next, end: signedData.contentEnd, tag: BERTag.contextConstructed1) else { return nil }
            next = crls.end
        }
        guard let signerInfos = element(at: next, end: signedData.contentEnd, tag: BERTag.set),
              signerInfos.end == signedData.contentEnd else { return nil }
        container.signerInfos = signerInfos.encodedRange
        return (container, .inside(octets.contentRange))
    }

    /// The general walk: DER and BER, with an error that names what is wrong.
    private static func readReportingErrors(_ bytes: UnsafeBufferPointer<UInt8>,
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
