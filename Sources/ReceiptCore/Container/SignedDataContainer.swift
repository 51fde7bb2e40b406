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
    /// The envelope's unsigned fields, which only verification's canonical-form
    /// check reads (CanonicalForm): SignedData.version and digestAlgorithms as
    /// whole elements, and whether a `crls [1]` is present.
    var version: Range<Int> = 0..<0
    var digestAlgorithms: Range<Int> = 0..<0
    var hasCRLs = false
    var isBER = false
    var maxDepth = 0

    /// Each certificate's encoding, in receipt order. More than `limit` is refused
    /// before any is looked at: no genuine receipt carries more than three.
    func certificateRanges(in bytes: UnsafeBufferPointer<UInt8>, limit: Int) throws(ReceiptError) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(3)  // what genuine receipts carry: one allocation, not three
        try walkCertificates(in: bytes, limit: limit) { ranges.append($0) }
        return ranges
    }

    /// From the first certificate's start to the last one's end, nil when there is
    /// none: what a verifier's cache knows a bag by, found without an array.
    func certificateSpan(in bytes: UnsafeBufferPointer<UInt8>, limit: Int) throws(ReceiptError) -> Range<Int>? {
        var first: Int?, last = 0
        try walkCertificates(in: bytes, limit: limit) { range in
            if first == nil { first = range.lowerBound }
            last = range.upperBound
        }
        return first.map { $0..<last }
    }

    private func walkCertificates(in bytes: UnsafeBufferPointer<UInt8>, limit: Int,
                                  _ body: (Range<Int>) -> Void) throws(ReceiptError) {
        var reader = BERReader(bytes: bytes, range: certificateSet, maxDepth: maxDepth,
                               indefiniteEnds: isBER ? IndefiniteEndMemo() : nil)
        var count = 0
        while let certificate = try? reader.next() {
            guard count < limit else {
                throw ReceiptError(.tooManyCertificates, at: certificate.start,
                                   "more than \(limit) certificates; genuine receipts carry 1 to 3")
            }
            count += 1
            body(certificate.encodedRange)
        }
    }
}

enum SignedDataReader {
    /// Walks ContentInfo → SignedData and returns the container and where the payload is.
    static func read(_ bytes: UnsafeBufferPointer<UInt8>,
                     limits: ParseLimits) throws(ReceiptError) -> (SignedDataContainer, PayloadLocation) {
        if let walked = readStraight(bytes, maxDepth: limits.maxDepth) {
            // Debug builds (the test suites) check the shortcut against the general walk.
            assert((try? readReportingErrors(bytes, limits: limits)).map { $0 == walked } == true,
                   "the DER shortcut disagrees with the general walk")
            return walked
        }
        return try readReportingErrors(bytes, limits: limits)
    }

    /// The hot path: the container read in one forward pass, DER or the BER Xcode
    /// writes, with every element where the grammar puts it and the payload in one
    /// piece. Nil for anything else (several payload chunks, an unexpected tag or
    /// length, nesting past `maxDepth`), which the general reader then accepts or
    /// names precisely. It accepts nothing the general reader would refuse.
    private static func readStraight(_ bytes: UnsafeBufferPointer<UInt8>,
                                     maxDepth: Int) -> (SignedDataContainer, PayloadLocation)? {
        var walk = StraightWalk(bytes: bytes, maxDepth: maxDepth)
        guard let info = walk.enter(BERTag.sequence, within: bytes.count, depth: 0),
              let contentType = walk.leaf(BERTag.objectIdentifier, within: info.limit, depth: 1),
              equals(bytes, contentType, ObjectIdentifiers.signedData),
              let explicit = walk.enter(BERTag.contextConstructed0, within: info.limit, depth: 1),
              let signedData = walk.enter(BERTag.sequence, within: explicit.limit, depth: 2),
              let version = walk.skip(BERTag.integer, within: signedData.limit, depth: 3),
              let digestAlgorithms = walk.skip(BERTag.set, within: signedData.limit, depth: 3),
              let encapsulated = walk.enter(BERTag.sequence, within: signedData.limit, depth: 3),
              let dataType = walk.leaf(BERTag.objectIdentifier, within: encapsulated.limit, depth: 4),
              equals(bytes, dataType, ObjectIdentifiers.data),
              let content = walk.enter(BERTag.contextConstructed0, within: encapsulated.limit, depth: 4),
              let payload = walk.payload(within: content.limit, depth: 5),
              walk.leave(content), walk.leave(encapsulated) else { return nil }
        var container = SignedDataContainer()
        container.maxDepth = maxDepth
        container.isBER = info.close == nil
        container.version = version
        container.digestAlgorithms = digestAlgorithms
        if walk.next(is: BERTag.contextConstructed0, in: signedData) {
            guard let certificates = walk.enter(BERTag.contextConstructed0, within: signedData.limit, depth: 3) else {
                return nil
            }
            let start = walk.position
            while !walk.atEnd(of: certificates) {
                guard walk.skip(BERTag.sequence, within: certificates.limit, depth: 4) != nil else { return nil }
            }
            container.certificateSet = start..<walk.position
            guard walk.leave(certificates) else { return nil }
        }
        if walk.next(is: BERTag.contextConstructed1, in: signedData) {
            guard walk.skip(BERTag.contextConstructed1, within: signedData.limit, depth: 3) != nil else { return nil }
            container.hasCRLs = true
        }
        guard let signerInfos = walk.skip(BERTag.set, within: signedData.limit, depth: 3),
              walk.leave(signedData), walk.leave(explicit), walk.leave(info), walk.position == bytes.count else {
            return nil
        }
        container.signerInfos = signerInfos
        return (container, .inside(payload))
    }

    /// The general walk: DER and BER, with an error that names what is wrong.
    private static func readReportingErrors(_ bytes: UnsafeBufferPointer<UInt8>,
                                            limits: ParseLimits) throws(ReceiptError) -> (SignedDataContainer, PayloadLocation) {
        let maxDepth = limits.maxDepth
        var container = SignedDataContainer()
        container.maxDepth = maxDepth
        let isBER = bytes.count > 1 && bytes[1] == 0x80
        var top = BERReader(bytes: bytes, range: 0..<bytes.count, maxDepth: maxDepth,
                            indefiniteEnds: isBER ? IndefiniteEndMemo() : nil, wholeInputUpTo: limits.maxInputBytes)
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
        container.version = try fields.next(expecting: BERTag.integer, "SignedData.version").encodedRange
        // Parsing ignores it; verification requires it to name exactly the signer's digest.
        container.digestAlgorithms = try fields.next(expecting: BERTag.set, "SignedData.digestAlgorithms").encodedRange

        let payload = try readEncapsulatedContent(&fields, bytes: bytes, limits: limits)

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
            container.hasCRLs = true
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
    private static func readEncapsulatedContent(_ fields: inout BERReader, bytes: UnsafeBufferPointer<UInt8>,
                                                limits: ParseLimits) throws(ReceiptError) -> PayloadLocation {
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
            // Counted first, joined later straight into the receipt's own buffer
            // (ReceiptStorage.placePayload): no list of chunks is ever held, so
            // memory stays within the payload's size however finely it is cut.
            var count = 0
            var byteCount = 0
            var only = 0..<0
            try forEachChunk(of: octets, reader: inner) { (chunk) throws(ReceiptError) in
                guard count < limits.maxPayloadChunks else {
                    throw ReceiptError(.limitExceeded, at: chunk.lowerBound,
                                       "the payload is cut into more than \(limits.maxPayloadChunks) chunks")
                }
                count += 1
                byteCount += chunk.count
                only = chunk
            }
            // Xcode writes the whole payload as one chunk: then it can stay where it is.
            if count == 1 { return .inside(only) }
            return .chunked(PayloadChunks(octets: octets.encodedRange, depth: inner.depth, maxDepth: limits.maxDepth,
                                          byteCount: byteCount))
        default:
            throw ReceiptError(.unexpectedTag, at: octets.start,
                               "the payload: expected OCTET STRING, found \(BERTag.describe(octets.tag))")
        }
    }

    /// Calls `body` with each primitive chunk's content range, in order, at any
    /// nesting of constructed OCTET STRINGs that `maxDepth` allows.
    static func forEachChunk(of octets: BERElement, reader: BERReader,
                             _ body: (Range<Int>) throws(ReceiptError) -> Void) throws(ReceiptError) {
        var chunks = reader.children(of: octets)
        while let chunk = try chunks.next() {
            switch chunk.tag {
            case BERTag.octetString:
                try body(chunk.contentRange)
            case BERTag.constructedOctetString:
                try forEachChunk(of: chunk, reader: chunks, body)
            default:
                throw ReceiptError(.unexpectedTag, at: chunk.start,
                                   "a payload chunk: expected OCTET STRING, found \(BERTag.describe(chunk.tag))")
            }
        }
    }

    /// Copies a chunked payload, which `read` has already walked and counted,
    /// into `buffer` of exactly `chunks.byteCount` bytes.
    static func join(_ chunks: PayloadChunks, in bytes: UnsafeBufferPointer<UInt8>,
                     into buffer: UnsafeMutableBufferPointer<UInt8>) throws(ReceiptError) {
        var reader = BERReader(bytes: bytes, range: chunks.octets, depth: chunks.depth, maxDepth: chunks.maxDepth)
        let octets = try reader.next(expecting: BERTag.constructedOctetString, "the payload")
        var written = 0
        try forEachChunk(of: octets, reader: reader) { (chunk) throws(ReceiptError) in
            guard chunk.count <= buffer.count - written else {
                throw ReceiptError(.badEncoding, at: chunk.lowerBound, "the payload's chunks changed size")
            }
            if !chunk.isEmpty {
                memcpy(buffer.baseAddress! + written, bytes.baseAddress! + chunk.lowerBound, chunk.count)
            }
            written += chunk.count
        }
    }

    static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ expected: [UInt8]) -> Bool {
        range.count == expected.count && expected.withUnsafeBufferPointer { wanted in
            memcmp(bytes.baseAddress! + range.lowerBound, wanted.baseAddress!, range.count) == 0
        }
    }
}

/// A forward-only reader for readStraight: where a constructed element closes is
/// either its definite end or its end-of-contents octets, so BER needs no look
/// ahead. Every failure is nil; the general reader then says what is wrong. Depths
/// are those the general reader would give each element, and the same bound holds.
private struct StraightWalk {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    private(set) var position = 0

    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    /// An entered element: `close` is its definite end, or nil when end-of-contents
    /// closes it; `limit` bounds its children.
    struct Entered {
        let close: Int?
        let limit: Int
    }

    /// Reads a header at `position` and moves past it: tag, and the content's end (nil if indefinite).
    private mutating func header(within limit: Int, depth: Int) -> (tag: UInt8, contentEnd: Int?)? {
        guard depth <= maxDepth else { return nil }
        if let element = BERElement.definite(in: bytes, at: position, end: limit) {  // DER's usual forms
            position = element.contentStart
            return (element.tag, element.contentEnd)
        }
        guard limit &- position >= 2 else { return nil }
        let tag = bytes[position]
        let first = bytes[position &+ 1]
        guard tag & 0x1F != 0x1F else { return nil }
        var cursor = position &+ 2
        if first == 0x80 {
            guard tag & 0x20 != 0 else { return nil }
            position = cursor
            return (tag, nil)
        }
        var length = Int(first)
        if first > 0x80 {
            let octets = Int(first & 0x7F)
            guard octets <= 4, limit &- cursor >= octets else { return nil }
            length = 0
            for _ in 0..<octets {
                length = length &<< 8 | Int(bytes[cursor])
                cursor &+= 1
            }
        }
        guard length <= limit &- cursor else { return nil }
        position = cursor
        return (tag, cursor &+ length)
    }

    mutating func enter(_ tag: UInt8, within limit: Int, depth: Int) -> Entered? {
        guard let read = header(within: limit, depth: depth), read.tag == tag else { return nil }
        return Entered(close: read.contentEnd, limit: read.contentEnd ?? limit)
    }

    /// A primitive element's content range, moving past it.
    mutating func leaf(_ tag: UInt8, within limit: Int, depth: Int) -> Range<Int>? {
        guard let read = header(within: limit, depth: depth), read.tag == tag, let end = read.contentEnd else { return nil }
        let content = position..<end
        position = end
        return content
    }

    /// A whole element of `tag` (any tag if nil), walking into it only when it is
    /// indefinite; returns its encoded range.
    mutating func skip(_ tag: UInt8?, within limit: Int, depth: Int) -> Range<Int>? {
        let start = position
        guard let read = header(within: limit, depth: depth), tag == nil || read.tag == tag else { return nil }
        if let end = read.contentEnd {
            position = end
            return start..<end
        }
        while !atEndOfContents(within: limit) {
            guard skip(nil, within: limit, depth: depth &+ 1) != nil else { return nil }
        }
        position &+= 2
        return start..<position
    }

    /// The payload: an OCTET STRING, or a constructed one holding exactly one chunk.
    mutating func payload(within limit: Int, depth: Int) -> Range<Int>? {
        guard limit &- position >= 2 else { return nil }
        if bytes[position] == BERTag.octetString { return leaf(BERTag.octetString, within: limit, depth: depth) }
        guard let octets = enter(BERTag.constructedOctetString, within: limit, depth: depth),
              let chunk = leaf(BERTag.octetString, within: octets.limit, depth: depth &+ 1), leave(octets) else { return nil }
        return chunk
    }

    func atEnd(of element: Entered) -> Bool {
        if let close = element.close { return position >= close }
        return atEndOfContents(within: element.limit)
    }

    func next(is tag: UInt8, in element: Entered) -> Bool {
        !atEnd(of: element) && position < element.limit && bytes[position] == tag
    }

    /// Leaves an entered element: nothing may remain before its close.
    mutating func leave(_ element: Entered) -> Bool {
        if let close = element.close { return position == close }
        guard atEndOfContents(within: element.limit) else { return false }
        position &+= 2
        return true
    }

    private func atEndOfContents(within limit: Int) -> Bool {
        limit &- position >= 2 && bytes[position] == 0 && bytes[position &+ 1] == 0
    }
}
