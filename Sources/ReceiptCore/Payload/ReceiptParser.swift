/// The parse: input form → PKCS #7 container → payload attributes → typed values.
/// One pass over the payload, no certificate decoding, and every string made into a
/// NUL-terminated copy in one arena so no per-field allocation happens.
enum ReceiptParser {
    static func parse(_ input: UnsafeBufferPointer<UInt8>, limits: ParseLimits) throws(ReceiptError) -> Receipt {
        let storage = try InputForm.receiptStorage(from: input, limits: limits)
        let (container, location) = try SignedDataReader.read(storage.encoded, maxDepth: limits.maxDepth)
        try storage.placePayload(location)
        var text = try storage.makeTextArena()
        let inputOffset: Int? = if case .inside(let range) = location { range.lowerBound } else { nil }
        let parsed = try parsePayload(storage.payload, text: &text, limits: limits, inputOffset: inputOffset)
        storage.finishText(text)
        return Receipt(storage: storage, container: container, payload: parsed)
    }

    /// Errors inside the payload carry payload offsets; report them as input offsets
    /// when the payload lies in the input, and say so in words when it was joined.
    private static func parsePayload(_ payload: UnsafeBufferPointer<UInt8>, text: inout TextArena, limits: ParseLimits,
                                     inputOffset: Int?) throws(ReceiptError) -> ParsedPayload {
        do {
            var builder = PayloadBuilder(payload: payload, text: text, limits: limits)
            try builder.readAll()
            text = builder.text
            return builder.result
        } catch {
            if let inputOffset, let offset = error.offset {
                throw ReceiptError(error.status, at: offset + inputOffset, error.detail)
            }
            let place = error.offset.map { " (payload byte \($0))" } ?? ""
            throw ReceiptError(error.status, error.detail + place)
        }
    }
}

/// The flat arrays a Receipt is made of.
struct ParsedPayload {
    var appValues = [StoredValue](repeating: .absent, count: ReceiptField.appFields.count)
    var purchaseValues: [StoredValue] = []
    var appAttributeOffsets: [UInt32] = []
    var purchaseAttributeOffsets: [UInt32] = []
    var purchaseAttributeStarts: [Int] = [0]
}
