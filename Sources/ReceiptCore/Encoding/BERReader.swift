/// A bounds-checked reader of BER elements over borrowed bytes.
///
/// It reads DER and the BER that Xcode writes: indefinite lengths are accepted on
/// constructed elements only, long-form lengths are limited to four octets, and
/// nesting is bounded by `maxDepth` because finding the end of an indefinite
/// element means walking its children.
struct BERReader {
    let bytes: UnsafeBufferPointer<UInt8>
    private(set) var position: Int
    let end: Int
    let depth: Int
    let maxDepth: Int
    /// Shared by a reader and its children over BER input, where it saves walking
    /// the same indefinite-length element again at every level that reads it.
    let indefiniteEnds: IndefiniteEndMemo?
    /// The largest accepted input when `bytes` is the whole input, -1 otherwise (one
    /// word: readers are made per attribute, on the parse's hot path). In the whole
    /// input, an element that runs past its end with a length such an input could
    /// have is an input cut short (TRUNCATED). Anywhere else (inside a payload or
    /// certificate, past an enclosing element, or longer than any accepted input) a
    /// length that does not fit is LENGTH_OVERFLOW.
    let wholeInputMaxLength: Int

    init(bytes: UnsafeBufferPointer<UInt8>, range: Range<Int>, depth: Int = 0, maxDepth: Int,
         indefiniteEnds: IndefiniteEndMemo? = nil, wholeInputUpTo maxLength: Int? = nil) {
        self.bytes = bytes
        self.position = range.lowerBound
        self.end = range.upperBound
        self.depth = depth
        self.maxDepth = maxDepth
        self.indefiniteEnds = indefiniteEnds
        self.wholeInputMaxLength = maxLength ?? -1
    }

    var isAtEnd: Bool { position >= end }

    /// A reader over the content of `element`, one level deeper.
    func children(of element: BERElement) -> BERReader {
        BERReader(bytes: bytes, range: element.contentRange, depth: depth + 1, maxDepth: maxDepth,
                  indefiniteEnds: indefiniteEnds, wholeInputUpTo: wholeInputMaxLength >= 0 ? wholeInputMaxLength : nil)
    }

    /// Reads the next element, or returns nil at the end of this reader's range.
    @inline(__always)
    mutating func next() throws(ReceiptError) -> BERElement? {
        if isAtEnd { return nil }
        if let element = definiteElement(at: position) {
            position = element.end
            return element
        }
        let element = try readElement(at: position, limit: end, depth: depth)
        position = element.end
        return element
    }

    @inline(__always)
    private func definiteElement(at start: Int) -> BERElement? {
        guard depth <= maxDepth else { return nil }
        return BERElement.definite(in: bytes, at: start, end: end)
    }

    /// Reads the next element and requires it to carry `tag`.
    mutating func next(expecting tag: UInt8, _ what: @autoclosure () -> String) throws(ReceiptError) -> BERElement {
        guard let element = try next() else {
            throw ReceiptError(.truncated, at: position, "\(what()) is missing: its enclosing element ends here")
        }
        guard element.tag == tag else {
            throw ReceiptError(.unexpectedTag, at: element.start,
                               "\(what()): expected \(BERTag.describe(tag)), found \(BERTag.describe(element.tag))")
        }
        return element
    }

    /// Requires that nothing is left in this reader's range.
    func expectEnd(_ what: @autoclosure () -> String) throws(ReceiptError) {
        if !isAtEnd {
            throw ReceiptError(.unexpectedTag, at: position, "unexpected extra element after \(what())")
        }
    }

    @inline(never)
    private func readElement(at start: Int, limit: Int, depth: Int) throws(ReceiptError) -> BERElement {
        if depth > maxDepth {
            throw ReceiptError(.nestingTooDeep, at: start, "elements nest deeper than \(maxDepth) levels")
        }
        guard start < limit else { throw ReceiptError(.truncated, at: start, "expected an element, found the end") }
        let tag = bytes[start]
        if tag & 0x1F == 0x1F {
            throw ReceiptError(.badEncoding, at: start, "high-tag-number form (0x\(hexByte(tag))) is not used by receipts")
        }
        guard start + 1 < limit else {
            throw ReceiptError(.truncated, at: start, "input ends after the tag octet, before the length")
        }
        let first = bytes[start + 1]
        var cursor = start + 2
        if first == 0x80 {
            return try readIndefinite(tag: tag, start: start, contentStart: cursor, limit: limit, depth: depth)
        }
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else {
            let octets = Int(first & 0x7F)
            if first == 0xFF {
                throw ReceiptError(.badEncoding, at: start + 1, "length octet 0xff is reserved")
            }
            if octets > 4 {
                throw ReceiptError(.lengthOverflow, at: start + 1, "a length of \(octets) octets exceeds the 4-octet limit")
            }
            guard cursor + octets <= limit else {
                throw ReceiptError(.truncated, at: start + 1, "input ends inside a long-form length")
            }
            for _ in 0..<octets {
                length = (length << 8) | Int(bytes[cursor])
                cursor += 1
            }
        }
        guard length <= limit - cursor else {
            let cutShort = wholeInputMaxLength >= 0 && limit == bytes.count && length <= wholeInputMaxLength
            throw ReceiptError(cutShort ? .truncated : .lengthOverflow, at: start, cutShort
                               ? "the input ends inside an element of \(length) bytes (\(limit - cursor) bytes remain)"
                               : "an element of \(length) bytes does not fit in what encloses it (\(limit - cursor) bytes)")
        }
        return BERElement(tag: tag, start: start, contentStart: cursor, contentEnd: cursor + length,
                          end: cursor + length, isIndefinite: false)
    }

    private func readIndefinite(tag: UInt8, start: Int, contentStart: Int, limit: Int,
                                depth: Int) throws(ReceiptError) -> BERElement {
        guard tag & 0x20 != 0 else {
            throw ReceiptError(.badEncoding, at: start, "indefinite length on a primitive element")
        }
        if let known = indefiniteEnds?.end(of: start) {
            return BERElement(tag: tag, start: start, contentStart: contentStart, contentEnd: known - 2,
                              end: known, isIndefinite: true)
        }
        var cursor = contentStart
        while true {
            guard cursor + 2 <= limit else {
                throw ReceiptError(.truncated, at: start, "indefinite-length element is never closed")
            }
            if bytes[cursor] == 0 && bytes[cursor + 1] == 0 {
                indefiniteEnds?.remember(start: start, end: cursor + 2)
                return BERElement(tag: tag, start: start, contentStart: contentStart, contentEnd: cursor,
                                  end: cursor + 2, isIndefinite: true)
            }
            cursor = try readElement(at: cursor, limit: limit, depth: depth + 1).end
        }
    }
}

/// Where indefinite-length elements end, by where they start. Xcode nests about
/// six; sixteen fixed slots hold them without another allocation, and past that
/// elements are simply walked again.
final class IndefiniteEndMemo {
    // One parse owns a memo and uses it from one thread: no dynamic exclusivity checks needed.
    @exclusivity(unchecked) private var starts = InlineArray<16, Int>(repeating: -1)
    @exclusivity(unchecked) private var ends = InlineArray<16, Int>(repeating: -1)
    @exclusivity(unchecked) private var count = 0

    func end(of start: Int) -> Int? {
        for index in 0..<count where starts[index] == start { return ends[index] }
        return nil
    }

    func remember(start: Int, end: Int) {
        guard count < 16, self.end(of: start) == nil else { return }
        starts[count] = start
        ends[count] = end
        count += 1
    }
}
