/// The parse: input form → PKCS #7 container → payload attributes → typed values.
/// One pass over the payload, no certificate decoding, and every string
/// NUL-terminated in one copy of the payload, so no per-field allocation or copy happens.
enum ReceiptParser {
    static func parse(_ input: UnsafeBufferPointer<UInt8>, limits: ParseLimits,
                      scope: PayloadScope = .everything) throws(ReceiptError) -> Receipt {
        let verdictOnly = scope == .verdictFields
        let storage = try InputForm.receiptStorage(from: input, limits: limits, borrowing: verdictOnly)
        let (container, location) = try SignedDataReader.read(storage.encoded, maxDepth: limits.maxDepth)
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

/// How much of the payload a parse types.
enum PayloadScope {
    /// Every attribute SPEC §2 names, purchases included: what `Receipt.parse` does.
    case everything
    /// The app's own attributes only, which is all a verdict reads. The in_app
    /// attributes are skipped unread, so their errors surface only in a full parse.
    /// The receipt borrows the input and its strings are not NUL-terminated, so it
    /// must not outlive the call that parsed it (ReceiptVerifier.verify(encoded:)).
    case verdictFields
}

/// The flat tables a Receipt is made of, built by PayloadBuilder.
struct ParsedPayload: ~Copyable {
    var appValues = PlainVector<StoredValue>()
    /// One row of `ReceiptField.inAppFields.count` values per purchase.
    var purchaseValues = PlainVector<StoredValue>()
    var appAttributeOffsets = PlainVector<UInt32>()
    var purchaseAttributeOffsets = PlainVector<UInt32>()
    /// Per purchase, where its attributes start in `purchaseAttributeOffsets`; one extra entry marks the end.
    var purchaseAttributeStarts = PlainVector<Int>()

    init() throws(ReceiptError) {
        guard appValues.append(.absent, repeated: ReceiptField.appFields.count), purchaseAttributeStarts.append(0) else {
            throw ParsedPayload.outOfMemory
        }
    }

    static let outOfMemory = ReceiptError(.limitExceeded, "out of memory for the receipt's tables")
}
