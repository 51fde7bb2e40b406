/// Reads one `SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`,
/// the shape shared by app and in-app attributes.
struct AttributeElement {
    let start: Int
    let type: Int64
    let version: Int64
    let value: Range<Int>
}

enum AttributeReader {
    static func read(_ sequence: BERElement, in reader: BERReader) throws(ReceiptError) -> AttributeElement {
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
    static func int64(_ bytes: UnsafeBufferPointer<UInt8>, _ element: BERElement,
                      _ what: @autoclosure () -> String) throws(ReceiptError) -> Int64 {
        let length = element.contentLength
        guard length > 0 else { throw ReceiptError(.badAttribute, at: element.start, "\(what()) is an empty INTEGER") }
        guard length <= 8 else {
            throw ReceiptError(.integerOverflow, at: element.start, "\(what()) is a \(length)-byte INTEGER, wider than 64 bits")
        }
        var value: Int64 = bytes[element.contentStart] >= 0x80 ? -1 : 0
        for index in element.contentRange {
            value = (value << 8) | Int64(bytes[index])
        }
        return value
    }
}
