/// The parse: input form → PKCS #7 container → payload attributes → typed values.
/// One pass over the payload, no certificate decoding, and every string made into a
/// NUL-terminated copy in one arena so no per-field allocation happens.
enum ReceiptParser {
    static func parse(_ input: UnsafeBufferPointer<UInt8>, limits: ParseLimits) throws(ReceiptError) -> Receipt {
        let encoded = try InputForm.receiptBytes(from: input, limits: limits)
        return try encoded.withUnsafeBufferPointer { (bytes) throws(ReceiptError) -> Receipt in
            let (container, location) = try SignedDataReader.read(bytes, maxDepth: limits.maxDepth)
            let parsed: ParsedPayload
            switch location {
            case .inside(let range):
                parsed = try parsePayload(UnsafeBufferPointer(rebasing: bytes[range]), limits: limits,
                                          inputOffset: range.lowerBound)
            case .joined(let payload):
                parsed = try payload.withUnsafeBufferPointer { (payloadBytes) throws(ReceiptError) in
                    try parsePayload(payloadBytes, limits: limits, inputOffset: nil)
                }
            }
            let storage = ReceiptStorage(encoded: encoded, payload: location, text: parsed.text)
            return Receipt(storage: storage, container: container, payload: parsed)
        }
    }

    /// Errors inside the payload carry payload offsets; report them as input offsets
    /// when the payload lies in the input, and say so in words when it was joined.
    private static func parsePayload(_ payload: UnsafeBufferPointer<UInt8>, limits: ParseLimits,
                                     inputOffset: Int?) throws(ReceiptError) -> ParsedPayload {
        do {
            var builder = PayloadBuilder(payload: payload, limits: limits)
            try builder.readAll()
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
    var text: [UInt8] = []
}
