/// Field access as pointers into a receipt's own storage, for callers that cannot
/// hold Swift values: the C ABI and, through it, every binding. Each pointer lives
/// as long as the Receipt. `purchase` nil means the app receipt's own record.
///
/// Kinds are checked here, so that every binding reports a wrong request the same way.
extension Receipt {
    package enum NumberRequest: Sendable {
        /// Integer fields, and boolean fields as 0/1.
        case integer
        /// Date fields, as epoch milliseconds.
        case date
    }

    package struct BorrowedAttribute {
        package let type: Int64
        package let version: Int64
        package let value: UnsafeBufferPointer<UInt8>
    }

    /// The NUL-terminated text of a string field, or a date's original text.
    package func borrowedText(_ fieldNumber: Int32, purchase: Int?) throws(ReceiptError) -> (UnsafePointer<CChar>, Int) {
        let (record, field) = try lookup(fieldNumber, purchase: purchase)
        guard field.kind == .string || field.kind == .date else { throw wrongKind(field, "text") }
        let value = try record.storedValue(field)
        return (storage.cString(value), Int(value.textLength))
    }

    package func number(_ fieldNumber: Int32, purchase: Int?, as request: NumberRequest) throws(ReceiptError) -> Int64 {
        let (record, field) = try lookup(fieldNumber, purchase: purchase)
        switch (request, field.kind) {
        case (.integer, .integer), (.integer, .boolean), (.date, .date):
            return try record.storedValue(field).number
        default:
            throw wrongKind(field, request == .date ? "a date" : "an integer")
        }
    }

    /// The attribute's value bytes exactly as stored, for any field but in_app.
    package func borrowedValueBytes(_ fieldNumber: Int32, purchase: Int?) throws(ReceiptError) -> UnsafeBufferPointer<UInt8> {
        let (record, field) = try lookup(fieldNumber, purchase: purchase)
        guard field.kind != .purchases else { throw wrongKind(field, "bytes (read purchases one by one)") }
        let value = try record.storedValue(field)
        return storage.payloadBytes(offset: value.valueOffset, length: value.valueLength)
    }

    package func attributeCount(purchase: Int?) -> Int {
        (try? record(purchase))?.attributeOffsets.count ?? 0
    }

    package func borrowedAttribute(at index: Int, purchase: Int?) throws(ReceiptError) -> BorrowedAttribute {
        let offsets = try record(purchase).attributeOffsets
        guard index >= 0 && index < offsets.count,
              let attribute = AttributeReader.reread(in: storage.payload, at: Int(offsets[offsets.startIndex + index]))
        else { throw ReceiptError(.indexOutOfRange, "attribute index \(index) of \(offsets.count)") }
        return BorrowedAttribute(type: attribute.type, version: attribute.version,
                                 value: UnsafeBufferPointer(rebasing: storage.payload[attribute.value]))
    }

    private func record(_ purchase: Int?) throws(ReceiptError) -> any FieldRecord {
        guard let purchase else { return self }
        guard let entry = self.purchase(at: purchase) else {
            throw ReceiptError(.indexOutOfRange, "purchase index \(purchase) of \(purchaseCount)")
        }
        return entry
    }

    private func lookup(_ fieldNumber: Int32, purchase: Int?) throws(ReceiptError) -> (any FieldRecord, ReceiptField) {
        guard let field = ReceiptField(rawValue: fieldNumber) else {
            throw ReceiptError(.unknownField, "\(fieldNumber) is not a field identifier")
        }
        return (try record(purchase), field)
    }

    private func wrongKind(_ field: ReceiptField, _ requested: String) -> ReceiptError {
        ReceiptError(.wrongFieldKind, "\(field.name) (\(field.rawValue)) is a \(field.kind) field, not \(requested)")
    }
}

extension ReceiptError {
    /// The detail cut to at most `maxBytes` of UTF-8 without splitting a character,
    /// for fixed-size C buffers.
    package func detailPrefix(maxBytes: Int) -> [UInt8] {
        var result = [UInt8]()
        for scalar in detail.unicodeScalars {
            let encoded = Array(String(scalar).utf8)
            if result.count + encoded.count > maxBytes { break }
            result += encoded
        }
        return result
    }
}
