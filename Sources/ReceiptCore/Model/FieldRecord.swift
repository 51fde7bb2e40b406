/// What a receipt and each of its purchases share: a row of stored values and a
/// list of raw attributes, read through one set of accessors. Receipt and
/// InAppPurchase differ only in which row they are.
protocol FieldRecord {
    var storage: ReceiptStorage { get }
    var scope: ReceiptField.Scope { get }
    func stored(_ slot: Int) -> StoredValue
    /// Borrowed from the receipt: use it only while the record is alive.
    var attributeOffsets: UnsafeBufferPointer<UInt32> { get }
}

extension FieldRecord {
    func storedValue(_ field: ReceiptField) throws(ReceiptError) -> StoredValue {
        guard field.scope == scope else {
            throw ReceiptError(.unknownField, "field \(field.rawValue) (\(field.name)) belongs to the other scope")
        }
        guard let value = presentValue(field) else {
            throw ReceiptError(.absent, "\(field.name) (\(field.rawValue)) is not present")
        }
        return value
    }

    /// The value of `field`, nil when absent or of the other scope: what the typed
    /// accessors read, without making the error (and its text) that `storedValue` would.
    @inline(__always)
    func presentValue(_ field: ReceiptField) -> StoredValue? {
        guard field.scope == scope else { return nil }
        let value = stored(field.slot)
        return value.isPresent ? value : nil
    }

    func string(_ field: ReceiptField) -> String? {
        guard field.kind == .string, let value = presentValue(field) else { return nil }
        return storage.string(value)
    }

    func integer(_ field: ReceiptField) -> Int64? {
        guard field.kind == .integer, let value = presentValue(field) else { return nil }
        return value.number
    }

    func boolean(_ field: ReceiptField) -> Bool? {
        guard field.kind == .boolean, let value = presentValue(field) else { return nil }
        return value.number != 0
    }

    func date(_ field: ReceiptField) -> ReceiptDate? {
        guard field.kind == .date, let value = presentValue(field) else { return nil }
        return ReceiptDate(text: storage.string(value), millisecondsSince1970: value.number)
    }

    /// A date's instant alone, without the String of its text that `date` makes.
    func dateMilliseconds(_ field: ReceiptField) -> Int64? {
        guard field.kind == .date, let value = presentValue(field) else { return nil }
        return value.number
    }

    func bytes(_ field: ReceiptField) -> [UInt8]? {
        guard let value = presentValue(field) else { return nil }
        return Array(storage.payloadBytes(offset: value.valueOffset, length: value.valueLength))
    }

    /// The typed value of any field of this scope; nil when absent.
    func typedValue(_ field: ReceiptField) -> ReceiptValue? {
        switch field.kind {
        case .string: string(field).map(ReceiptValue.string)
        case .integer: integer(field).map(ReceiptValue.integer)
        case .boolean: boolean(field).map(ReceiptValue.boolean)
        case .date: date(field).map(ReceiptValue.date)
        case .bytes: bytes(field).map(ReceiptValue.bytes)
        case .purchases: nil
        }
    }

    /// Every attribute in receipt order, known and unknown, as stored.
    var attributesAsStored: [RawAttribute] {
        attributeOffsets.compactMap { offset in
            AttributeReader.reread(in: storage.payload, at: Int(offset)).map {
                RawAttribute(type: $0.type, version: $0.version, value: Array(storage.payload[$0.value]))
            }
        }
    }

    /// The attributes this library does not type (Apple's own, which change); kept raw.
    var attributesNotTyped: [RawAttribute] {
        attributesAsStored.filter { ReceiptField.known(type: $0.type, in: scope) == nil }
    }
}
