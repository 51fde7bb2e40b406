/// The parse: input form → PKCS #7 container → payload attributes → typed values.
/// One pass over the payload, no certificate decoding, and every string
/// NUL-terminated in one copy of the payload, so no per-field allocation or copy happens.
enum ReceiptParser {
    static func parse(_ input: UnsafeBufferPointer<UInt8>, limits: ParseLimits,
                      scope: PayloadScope = .everything) throws(ReceiptError) -> Receipt {
        let verdictOnly = scope == .verdictFields
        let storage = try ReceiptStorage.holding(input, limits: limits, borrowing: verdictOnly)
        let (container, location) = try SignedDataReader.read(storage.encoded, limits: limits)
        try storage.placePayload(location)
        let text = verdictOnly ? storage.useUnterminatedText() : storage.makeTextArena()
        let inputOffset: Int? = if case .inside(let range) = location { range.lowerBound } else { nil }
        let parsed = try parsePayload(storage.payload, text: text, limits: limits, scope: scope, inputOffset: inputOffset)
        return Receipt(storage: storage, container: container, payload: parsed)
    }

    /// Errors inside the payload carry payload offsets; report them as input offsets
    /// when the payload lies in the input, and say so in words when it was joined.
    private static func parsePayload(_ payload: UnsafeBufferPointer<UInt8>, text: TextArena, limits: ParseLimits,
                                     scope: PayloadScope, inputOffset: Int?) throws(ReceiptError) -> ParsedPayload {
        do {
            var builder = try PayloadBuilder(payload: payload, text: text, limits: limits, scope: scope)
            try builder.readAll()
            return builder.finish()
        } catch {
            if let inputOffset, let offset = error.offset {
                throw ReceiptError(error.status, at: offset + inputOffset, error.detail)
            }
            let place = error.offset.map { " (payload byte \($0))" } ?? ""
            throw ReceiptError(error.status, error.detail + place)
        }
    }
}
