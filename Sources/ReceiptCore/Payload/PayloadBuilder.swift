/// Reads `Payload ::= SET OF ReceiptAttribute` and each `InAppReceipt` inside
/// attribute 17, typing the attributes SPEC §2 names and keeping the rest raw.
struct PayloadBuilder {
    let payload: UnsafeBufferPointer<UInt8>
    let limits: ParseLimits
    let fields = FieldTable.shared
    private(set) var result = ParsedPayload()
    private(set) var text: TextArena
    private var attributeCount = 0

    init(payload: UnsafeBufferPointer<UInt8>, text: TextArena, limits: ParseLimits) {
        self.payload = payload
        self.text = text
        self.limits = limits
        // Every attribute takes at least 11 bytes; reserving for that avoids regrowth.
        result.appAttributeOffsets.reserveCapacity(min(payload.count / 11, 64))

    }

    mutating func readAll() throws(ReceiptError) {
        var top = BERReader(bytes: payload, range: 0..<payload.count, maxDepth: limits.maxDepth)
        let set = try top.next(expecting: BERTag.set, "the payload")
        if !top.isAtEnd {
            throw ReceiptError(.trailingData, at: top.position, "bytes follow the payload SET")
        }
        var attributes = top.children(of: set)
        while let element = try attributes.next() {
            let attribute = try readCounted(element, in: attributes)
            result.appAttributeOffsets.append(UInt32(attribute.start))
            guard let entry = fields.entry(type: attribute.type, in: .app) else { continue }
            if entry.kind == .purchases {
                try readPurchase(attribute, in: attributes)
                continue
            }
            try rejectDuplicate(result.appValues[entry.slot], attribute, entry.field)
            if let value = try decode(attribute, as: entry) { result.appValues[entry.slot] = value }
        }
    }

    private mutating func readCounted(_ element: BERElement, in reader: BERReader) throws(ReceiptError) -> AttributeElement {
        attributeCount += 1
        if attributeCount > limits.maxAttributes {
            throw ReceiptError(.limitExceeded, at: element.start, "more than \(limits.maxAttributes) attributes")
        }
        return try AttributeReader.read(element, in: reader)
    }

    private mutating func readPurchase(_ attribute: AttributeElement, in reader: BERReader) throws(ReceiptError) {
        var valueReader = BERReader(bytes: payload, range: attribute.value, depth: reader.depth + 1,
                                    maxDepth: limits.maxDepth)
        let set = try valueReader.next(expecting: BERTag.set, "in_app (17) entry \(result.purchaseAttributeStarts.count)")
        try valueReader.expectEnd("the in_app SET")
        if result.purchaseValues.isEmpty {  // the first purchase: size for all the payload can hold
            result.purchaseAttributeOffsets.reserveCapacity(payload.count / 11)
            result.purchaseAttributeStarts.reserveCapacity(payload.count / 256 + 2)
        }
        let slotBase = result.purchaseValues.count
        result.purchaseValues.append(contentsOf: fields.absentPurchaseRow)
        var attributes = valueReader.children(of: set)
        while let element = try attributes.next() {
            let inner = try readCounted(element, in: attributes)
            result.purchaseAttributeOffsets.append(UInt32(inner.start))
            // An unknown type here, 17 included, is kept raw and never descended into.
            guard let entry = fields.entry(type: inner.type, in: .inApp) else { continue }
            try rejectDuplicate(result.purchaseValues[slotBase + entry.slot], inner, entry.field)
            if let value = try decode(inner, as: entry) { result.purchaseValues[slotBase + entry.slot] = value }
        }
        result.purchaseAttributeStarts.append(result.purchaseAttributeOffsets.count)
    }

    private func rejectDuplicate(_ existing: StoredValue, _ attribute: AttributeElement,
                                 _ field: ReceiptField) throws(ReceiptError) {
        if existing.isPresent {
            throw ReceiptError(.duplicateAttribute, at: attribute.start,
                               "\(field.name) (\(field.rawValue)) occurs more than once")
        }
    }

    /// The typed value of a known attribute; nil for an empty date, which means absent.
    private mutating func decode(_ attribute: AttributeElement, as entry: FieldEntry) throws(ReceiptError) -> StoredValue? {
        let field = entry.field
        var value = StoredValue(valueOffset: UInt32(attribute.value.lowerBound), valueLength: UInt32(attribute.value.count),
                                textOffset: StoredValue.none, textLength: 0, number: 0)
        switch entry.kind {
        case .bytes, .purchases:
            break
        case .integer, .boolean:
            let element = try innerElement(attribute, field, expecting: BERTag.integer)
            value.number = try IntegerDecoding.int64(payload, element, "\(field.name) (\(field.rawValue))")
            if entry.kind == .boolean && value.number != 0 && value.number != 1 {
                throw ReceiptError(.badAttribute, at: element.start,
                                   "\(field.name) (\(field.rawValue)) is \(value.number), expected 0 or 1")
            }
        case .string:
            let element = try innerElement(attribute, field, expecting: BERTag.utf8String)
            try checkString(element, field)
            if let invalid = UTF8Validation.firstInvalidOffset(payload, in: element.contentRange) {
                throw ReceiptError(.badUTF8, at: invalid, "\(field.name) (\(field.rawValue)) is not valid UTF-8")
            }
            (value.textOffset, value.textLength) = try appendText(element)
        case .date:
            let element = try innerElement(attribute, field, expecting: BERTag.ia5String)
            // An empty date means "absent" (SPEC §2), e.g. cancellation_date on a live purchase.
            if element.contentLength == 0 { return nil }
            try checkString(element, field)
            guard let milliseconds = ReceiptDateParser.epochMilliseconds(payload, in: element.contentRange) else {
                throw ReceiptError(.badDate, at: element.contentStart,
                                   "\(field.name) (\(field.rawValue)) is \"\(printable(element.contentRange))\", in no known date form")
            }
            value.number = milliseconds
            (value.textOffset, value.textLength) = try appendText(element)
        }
        return value
    }

    /// The single DER value an attribute's OCTET STRING holds, with the tag the field requires.
    @inline(__always)
    private func innerElement(_ attribute: AttributeElement, _ field: ReceiptField,
                              expecting tag: UInt8) throws(ReceiptError) -> BERElement {
        if let element = BERElement.definite(in: payload, at: attribute.value.lowerBound, end: attribute.value.upperBound),
           element.tag == tag, element.end == attribute.value.upperBound {
            return element
        }
        return try innerElementReportingErrors(attribute, field, expecting: tag)
    }

    @inline(never)
    private func innerElementReportingErrors(_ attribute: AttributeElement, _ field: ReceiptField,
                                             expecting tag: UInt8) throws(ReceiptError) -> BERElement {
        var reader = BERReader(bytes: payload, range: attribute.value, maxDepth: limits.maxDepth)
        guard let element = try reader.next() else {
            throw ReceiptError(.badAttribute, at: attribute.start, "\(field.name) (\(field.rawValue)) has an empty value")
        }
        guard element.tag == tag, !element.isIndefinite else {
            throw ReceiptError(.badAttribute, at: element.start,
                               "\(field.name) (\(field.rawValue)): expected \(BERTag.describe(tag)), found \(BERTag.describe(element.tag))")
        }
        if !reader.isAtEnd {
            throw ReceiptError(.badAttribute, at: reader.position, "\(field.name) (\(field.rawValue)) has bytes after its value")
        }
        return element
    }

    private func checkString(_ element: BERElement, _ field: ReceiptField) throws(ReceiptError) {
        if element.contentLength > limits.maxStringBytes {
            throw ReceiptError(.limitExceeded, at: element.start,
                               "\(field.name) (\(field.rawValue)) is \(element.contentLength) bytes, over the \(limits.maxStringBytes)-byte limit")
        }
    }

    private mutating func appendText(_ element: BERElement) throws(ReceiptError) -> (UInt32, UInt32) {
        guard let place = text.append(UnsafeBufferPointer(rebasing: payload[element.contentRange])) else {
            throw ReceiptError(.limitExceeded, at: element.start, "the text arena is full")
        }
        return place
    }

    private func printable(_ range: Range<Int>) -> String {
        let shown = payload[range].prefix(40).map { $0 >= 0x20 && $0 < 0x7F ? Character(UnicodeScalar($0)) : "?" }
        return String(shown) + (range.count > 40 ? "…" : "")
    }
}
