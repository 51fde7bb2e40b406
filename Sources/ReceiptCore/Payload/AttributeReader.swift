/// Reads one `SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`,
/// the shape shared by app and in-app attributes.
struct AttributeElement {
    let start: Int
    let type: Int64
    let version: Int64
    let value: Range<Int>
}

enum AttributeReader {
    @inline(__always)
    static func read(_ sequence: BERElement, in reader: BERReader) throws(ReceiptError) -> AttributeElement {
        if let attribute = wellFormed(sequence, reader.bytes) { return attribute }
        return try readReportingErrors(sequence, in: reader)
    }

    /// The hot path: every part definite, integers of 1 to 8 bytes (so their
    /// lengths are single octets), nothing extra. Nil sends the attribute to the
    /// general reader, which names what is wrong.
    @inline(__always)
    private static func wellFormed(_ sequence: BERElement, _ bytes: UnsafeBufferPointer<UInt8>) -> AttributeElement? {
        guard sequence.tag == BERTag.sequence,
              let (type, versionStart) = shortInteger(bytes, at: sequence.contentStart, end: sequence.contentEnd),
              let (version, valueStart) = shortInteger(bytes, at: versionStart, end: sequence.contentEnd),
              let value = BERElement.definite(in: bytes, at: valueStart, end: sequence.contentEnd),
              value.tag == BERTag.octetString, value.end == sequence.contentEnd else { return nil }
        return AttributeElement(start: sequence.start, type: type, version: version, value: value.contentRange)
    }

    /// An INTEGER of 1 to 8 content bytes at `start`, and where the next element begins.
    /// Offsets stay within the buffer, so the wrapping operators cannot wrap.
    @inline(__always)
    private static func shortInteger(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int, end: Int) -> (Int64, Int)? {
        guard end &- start >= 3, bytes[start] == BERTag.integer else { return nil }
        let length = Int(bytes[start &+ 1])
        let contentStart = start &+ 2
        guard length <= end &- contentStart else { return nil }
        let element = BERElement(tag: BERTag.integer, start: start, contentStart: contentStart,
                                 contentEnd: contentStart &+ length, end: contentStart &+ length, isIndefinite: false)
        guard let value = IntegerDecoding.int64IfFits(bytes, element) else { return nil }
        return (value, element.end)
    }

    @inline(never)
    private static func readReportingErrors(_ sequence: BERElement, in reader: BERReader) throws(ReceiptError) -> AttributeElement {
        guard sequence.tag == BERTag.sequence else {
            throw ReceiptError(.unexpectedTag, at: sequence.start,
                               "an attribute: expected SEQUENCE (0x30), found \(BERTag.describe(sequence.tag))")
        }
        var parts = reader.children(of: sequence)
        let typeElement = try parts.next(expecting: BERTag.integer, "the attribute type")
        let type = try IntegerDecoding.int64(reader.bytes, typeElement, "the attribute type")
        let versionElement = try parts.next(expecting: BERTag.integer, "attribute \(type)'s version")
        let version = try IntegerDecoding.int64(reader.bytes, versionElement, "attribute \(type)'s version")
        let value = try parts.next(expecting: BERTag.octetString, "attribute \(type)'s value")
        try parts.expectEnd("attribute \(type)'s value")
        return AttributeElement(start: sequence.start, type: type, version: version, value: value.contentRange)
    }

    /// Re-reads an attribute the parser already validated, for the raw listing.
    static func reread(in payload: UnsafeBufferPointer<UInt8>, at offset: Int) -> AttributeElement? {
        var reader = BERReader(bytes: payload, range: offset..<payload.count, maxDepth: 2)
        guard let sequence = try? reader.next() else { return nil }
        return try? read(sequence, in: reader)
    }
}

enum IntegerDecoding {
    /// A DER INTEGER as Int64; wider values are an error, not a truncation.
    @inline(__always)
    static func int64(_ bytes: UnsafeBufferPointer<UInt8>, _ element: BERElement,
                      _ what: @autoclosure () -> String) throws(ReceiptError) -> Int64 {
        guard let value = int64IfFits(bytes, element) else { throw widthError(element, what()) }
        return value
    }

    @inline(__always)
    static func int64IfFits(_ bytes: UnsafeBufferPointer<UInt8>, _ element: BERElement) -> Int64? {
        let length = element.contentLength
        guard length > 0 && length <= 8 else { return nil }
        var value: Int64 = bytes[element.contentStart] >= 0x80 ? -1 : 0
        var index = element.contentStart
        while index < element.contentEnd {
            value = (value &<< 8) | Int64(bytes[index])
            index &+= 1
        }
        return value
    }

    @inline(never)
    private static func widthError(_ element: BERElement, _ what: String) -> ReceiptError {
        element.contentLength == 0
            ? ReceiptError(.badAttribute, at: element.start, "\(what) is an empty INTEGER")
            : ReceiptError(.integerOverflow, at: element.start,
                           "\(what) is a \(element.contentLength)-byte INTEGER, wider than 64 bits")
    }
}
