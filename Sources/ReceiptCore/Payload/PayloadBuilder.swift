/// Reads `Payload ::= SET OF ReceiptAttribute` and each `InAppReceipt` inside
/// attribute 17, typing the attributes docs/FORMAT.md §2 names and keeping the rest raw.
struct PayloadBuilder: ~Copyable {
    let payload: UnsafeBufferPointer<UInt8>
    let limits: ParseLimits
    let scope: PayloadScope
    let fields = FieldTable.shared
    private var result: ParsedPayload
    let text: TextArena
    private var attributeCount = 0
    private var estimatedPurchases = 0
    /// The purchase being read, one value per in-app field; compacted into the tables after it.
    private var row = PlainVector<StoredValue>()

    init(payload: UnsafeBufferPointer<UInt8>, text: TextArena, limits: ParseLimits,
         scope: PayloadScope) throws(ReceiptError) {
        self.payload = payload
        self.scope = scope
        self.text = text
        self.limits = limits
        result = try ParsedPayload()
        // Every attribute takes at least 11 bytes; reserving for that avoids regrowth.
        // A verdict's receipt never lists its raw attributes: it keeps no offsets.
        if scope == .everything { _ = result.appAttributeOffsets.reserve(min(payload.count / 11, 64)) }
    }

    consuming func finish() -> ParsedPayload { result }

    mutating func readAll() throws(ReceiptError) {
        var top = BERReader(bytes: payload, range: 0..<payload.count, maxDepth: limits.maxDepth)
        let set = try top.next(expecting: BERTag.set, "the payload")
        if !top.isAtEnd {
            throw ReceiptError(.trailingData, at: top.position, "bytes follow the payload SET")
        }
        var attributes = top.children(of: set)
        while let element = try attributes.next() {
            let attribute = try readCounted(element, in: attributes)
            if scope == .everything {
                guard result.appAttributeOffsets.append(UInt32(attribute.start)) else { throw ParsedPayload.outOfMemory }
            }
            guard let entry = fields.entry(type: attribute.type, in: .app) else { continue }
            if entry.kind == .purchases {
                if scope == .everything { try readPurchase(attribute, in: attributes) }
                continue
            }
            try rejectDuplicate(result.appValues[entry.slot].isPresent, attribute, entry.field)
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
        let set = try valueReader.next(expecting: BERTag.set, "in_app (17) entry \(result.purchases.count + 1)")
        try valueReader.expectEnd("the in_app SET")
        let isFirst = result.purchases.count == 0
        if isFirst {
            // Size the tables once, assuming the rest of the payload holds purchases like
            // the first: one allocation each instead of a series of doublings.
            estimatedPurchases = payload.count / (attribute.value.upperBound - attribute.start) + 1
            guard row.append(.absent, repeated: ReceiptField.inAppFields.count),
                  result.purchases.reserve(estimatedPurchases) else { throw ParsedPayload.outOfMemory }
        }
        // `present` says which slots of `row` this purchase filled; the others hold
        // an earlier purchase's values and are never read.
        var present: PurchaseRecord.PresentSlots = 0
        let firstAttribute = result.purchaseAttributeOffsets.count
        var attributes = valueReader.children(of: set)
        while let element = try attributes.next() {
            let inner = try readCounted(element, in: attributes)
            guard result.purchaseAttributeOffsets.append(UInt32(inner.start)) else { throw ParsedPayload.outOfMemory }
            // An unknown type here, 17 included, is kept raw and never descended into.
            guard let entry = fields.entry(type: inner.type, in: .inApp) else { continue }
            let bit = PurchaseRecord.PresentSlots(1) &<< PurchaseRecord.PresentSlots(truncatingIfNeeded: entry.slot)
            try rejectDuplicate(present & bit != 0, inner, entry.field)
            if let value = try decode(inner, as: entry) {
                row[entry.slot] = value
                present |= bit
            }
        }
        let firstValue = result.purchaseValues.count
        var remaining = present
        while remaining != 0 {  // slot order: lowest bit first
            guard result.purchaseValues.append(row[remaining.trailingZeroBitCount]) else { throw ParsedPayload.outOfMemory }
            remaining &= remaining &- 1
        }
        guard result.purchases.append(PurchaseRecord(firstValue: UInt32(firstValue), firstAttribute: UInt32(firstAttribute),
                                                     presentSlots: present)) else { throw ParsedPayload.outOfMemory }
        if isFirst {  // capped: a first purchase unlike the rest must not reserve more than the payload's size
            _ = result.purchaseValues.reserve(min(estimatedPurchases * result.purchaseValues.count,
                                                  payload.count / MemoryLayout<StoredValue>.stride))
            _ = result.purchaseAttributeOffsets.reserve(min(estimatedPurchases * result.purchaseAttributeOffsets.count,
                                                            payload.count / MemoryLayout<UInt32>.stride))
        }
    }

    private func rejectDuplicate(_ alreadyPresent: Bool, _ attribute: AttributeElement,
                                 _ field: ReceiptField) throws(ReceiptError) {
        if alreadyPresent {
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
            (value.textOffset, value.textLength) = text.terminate(element.contentRange)
        case .date:
            let element = try innerElement(attribute, field, expecting: BERTag.ia5String)
            // An empty date means "absent" (docs/FORMAT.md §2), e.g. cancellation_date on a live purchase.
            if element.contentLength == 0 { return nil }
            try checkString(element, field)
            guard let milliseconds = ReceiptDateParser.epochMilliseconds(payload, in: element.contentRange) else {
                throw ReceiptError(.badDate, at: element.contentStart,
                                   "\(field.name) (\(field.rawValue)) is \"\(printable(element.contentRange))\", in no known date form")
            }
            value.number = milliseconds
            (value.textOffset, value.textLength) = text.terminate(element.contentRange)
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

    private func printable(_ range: Range<Int>) -> String {
        let shown = payload[range].prefix(40).map { $0 >= 0x20 && $0 < 0x7F ? Character(UnicodeScalar($0)) : "?" }
        return String(shown) + (range.count > 40 ? "…" : "")
    }
}
