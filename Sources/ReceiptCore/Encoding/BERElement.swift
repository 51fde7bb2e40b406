/// One tag-length-value element, located by byte offsets into the buffer it was read from.
struct BERElement {
    /// The identifier octet: class, constructed bit and tag number (< 31).
    let tag: UInt8
    let start: Int
    let contentStart: Int
    /// Exclusive. For an indefinite length this is where the end-of-contents octets begin.
    let contentEnd: Int
    /// Exclusive end of the whole element, after any end-of-contents octets.
    let end: Int
    let isIndefinite: Bool

    /// The common case, small enough to inline on hot paths: a low tag number and a
    /// definite length of up to two octets that fits before `end`. Nil for anything
    /// else; BERReader then accepts the rest of BER or says precisely what is wrong.
    ///
    /// Offsets are within the buffer (start <= end <= bytes.count, both far below
    /// Int.max), so the arithmetic here cannot overflow; it uses the wrapping
    /// operators to skip overflow checks the profile showed on this hottest path.
    @inline(__always)
    static func definite(in bytes: UnsafeBufferPointer<UInt8>, at start: Int, end: Int) -> BERElement? {
        let available = end &- start
        guard available >= 2 else { return nil }
        let tag = bytes[start]
        let first = bytes[start &+ 1]
        guard tag & 0x1F != 0x1F else { return nil }
        let length: Int
        let header: Int
        if first < 0x80 {
            length = Int(first)
            header = 2
        } else if first == 0x81 && available >= 3 {
            length = Int(bytes[start &+ 2])
            header = 3
        } else if first == 0x82 && available >= 4 {
            length = Int(bytes[start &+ 2]) &<< 8 | Int(bytes[start &+ 3])
            header = 4
        } else {
            return nil
        }
        guard length <= available &- header else { return nil }
        let contentStart = start &+ header
        return BERElement(tag: tag, start: start, contentStart: contentStart, contentEnd: contentStart &+ length,
                          end: contentStart &+ length, isIndefinite: false)
    }
    var contentRange: Range<Int> { contentStart..<contentEnd }
    var encodedRange: Range<Int> { start..<end }
    var contentLength: Int { contentEnd &- contentStart }
}

/// Tag octets the receipt grammar uses.
enum BERTag {
    static let integer: UInt8 = 0x02
    static let octetString: UInt8 = 0x04
    static let constructedOctetString: UInt8 = 0x24
    static let null: UInt8 = 0x05
    static let objectIdentifier: UInt8 = 0x06
    static let utf8String: UInt8 = 0x0C
    static let ia5String: UInt8 = 0x16
    static let sequence: UInt8 = 0x30
    static let set: UInt8 = 0x31
    static let contextConstructed0: UInt8 = 0xA0
    static let contextConstructed1: UInt8 = 0xA1

    static func describe(_ tag: UInt8) -> String {
        let names: [UInt8: String] = [
            integer: "INTEGER", octetString: "OCTET STRING", constructedOctetString: "OCTET STRING (constructed)",
            null: "NULL", objectIdentifier: "OBJECT IDENTIFIER", utf8String: "UTF8String",
            ia5String: "IA5String", sequence: "SEQUENCE", set: "SET",
            contextConstructed0: "[0]", contextConstructed1: "[1]",
        ]
        return "\(names[tag] ?? "tag") (0x\(hexByte(tag)))"
    }
}
