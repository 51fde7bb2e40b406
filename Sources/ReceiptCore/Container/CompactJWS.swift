#if canImport(Glibc)
import Glibc
#endif

/// A JWS in compact serialization (RFC 7515 §7.1):
/// `base64url(header).base64url(payload).base64url(signature)`, split and decoded
/// but not yet believed. The header and payload are JSON objects read with the
/// core's bounded reader (`JSONLimits.signedData`); the signature is kept as bytes;
/// the signing input is the ASCII `header.payload` exactly as given.
///
/// What is refused here, before any verification: more than
/// `ParseLimits.maxInputBytes`, anything but three segments joined by two dots (an
/// empty header or payload segment included), a segment that is not strict
/// unpadded base64url, JSON that is malformed, not UTF-8, too deep or too large,
/// repeats a member name, or is not an object (`RECEIPT_E_NOT_AN_OBJECT`: the
/// genuine Apple JWS whose payload is `null` among them). An empty signature
/// segment is kept, so that `alg: none` reaches the header step and is refused
/// there by name.
struct CompactJWS {
    /// The token without surrounding whitespace. Kept as text: a store hands its rows
    /// over as strings and writes them back out as strings (a read's answer), so a
    /// token read again from a store is neither copied nor validated once more.
    let token: String
    /// `header.payload` within `token`'s UTF-8: the bytes the signature covers.
    let signingInput: Range<Int>
    let payloadBytes: [UInt8]
    let payload: JSONValue
    /// The header and the signature, decoded; nil when only the payload was
    /// (`decodePayload`): such a JWS cannot be judged until it is decoded in full.
    let signed: SignedParts?

    struct SignedParts {
        let headerBytes: [UInt8]
        let header: JSONValue
        let signature: [UInt8]
    }

    /// Where a token's three segments lie, checked as `decode` describes; the
    /// segments themselves are not yet decoded.
    private struct Segments {
        let token: UnsafeBufferPointer<UInt8>
        /// Where `token` starts in the input: error offsets are the input's.
        let first: Int
        let header: Range<Int>, payload: Range<Int>, signature: Range<Int>

        init(_ input: UnsafeBufferPointer<UInt8>, limits: ParseLimits) throws(ReceiptError) {
            let maxInputBytes = min(limits.maxInputBytes, ParseLimits.ceilingInputBytes)
            guard input.count <= maxInputBytes else {
                throw ReceiptError(.inputTooLarge, "input of \(input.count) bytes exceeds the limit of \(maxInputBytes)")
            }
            guard let first = input.firstIndex(where: { !Base64.isWhitespace($0) }),
                  let last = input.lastIndex(where: { !Base64.isWhitespace($0) }) else {
                throw ReceiptError(.emptyInput, "the input is empty or only whitespace")
            }
            let token = UnsafeBufferPointer(rebasing: input[first...last])
            // A JWS starts "eyJ": anything else may be a wrapper someone passed instead.
            if token.first != UInt8(ascii: "e"), let mistake = InputShape.mistake(in: token) {
                throw ReceiptError(.notAJWS, at: first, mistake)
            }
            var dots: [Int] = []
            var searched = 0
            while dots.count <= 2, searched < token.count,
                  let found = memchr(token.baseAddress! + searched, Int32(UInt8(ascii: ".")), token.count - searched) {
                let index = token.baseAddress!.distance(to: found.assumingMemoryBound(to: UInt8.self))
                dots.append(index)
                searched = index + 1
            }
            guard dots.count == 2 else {
                throw ReceiptError(.notAJWS, at: first, dots.count > 2 ? "more than two '.' (a compact JWS has three segments)"
                                                                      : "\(dots.count) '.' where a compact JWS has two")
            }
            header = 0..<dots[0]
            payload = dots[0] + 1..<dots[1]
            signature = dots[1] + 1..<token.count
            guard !header.isEmpty, !payload.isEmpty else {
                throw ReceiptError(.notAJWS, at: first, "the \(header.isEmpty ? "header" : "payload") segment is empty")
            }
            self.token = token
            self.first = first
        }

        func decoded(_ range: Range<Int>) throws(ReceiptError) -> [UInt8] {
            try Base64URL.decode(UnsafeBufferPointer(rebasing: token[range]), offset: first + range.lowerBound)
        }

        /// The JWS with its payload decoded, and its header and signature when `signed`
        /// gives them. `text`: `token` as a String, when the caller has it already.
        func jws(payloadBytes: [UInt8], signed: SignedParts?, text: String? = nil) throws(ReceiptError) -> CompactJWS {
            CompactJWS(token: text ?? String(decoding: token, as: UTF8.self), signingInput: 0..<signature.lowerBound - 1,
                       payloadBytes: payloadBytes, payload: try CompactJWS.object(payloadBytes, "payload"), signed: signed)
        }
    }

    static func decode(_ input: UnsafeBufferPointer<UInt8>, limits: ParseLimits = .default) throws(ReceiptError) -> CompactJWS {
        let segments = try Segments(input, limits: limits)
        let headerBytes = try segments.decoded(segments.header)
        let payloadBytes = try segments.decoded(segments.payload)
        let signature = try segments.decoded(segments.signature)
        let header = try object(headerBytes, "header")
        return try segments.jws(payloadBytes: payloadBytes,
                                signed: SignedParts(headerBytes: headerBytes, header: header, signature: signature))
    }

    /// The payload alone, for a JWS verified before (a store's row): the header and
    /// signature segments are split off but not decoded, which is most of a JWS's
    /// bytes (the header's `x5c` is three certificates). The rest is as `decode`.
    /// The token is read where the String keeps it, and kept as that String when it
    /// has no whitespace around it (a stored row never has): neither is copied.
    static func decodePayload(_ input: String, limits: ParseLimits = .default) throws(ReceiptError) -> CompactJWS {
        try input.withUTF8Bytes { (buffer) throws(ReceiptError) in
            let segments = try Segments(buffer, limits: limits)
            let whole = segments.token.count == buffer.count
            return try segments.jws(payloadBytes: try segments.decoded(segments.payload), signed: nil, text: whole ? input : nil)
        }
    }

    /// A decoded segment's JSON, which must be an object. Offsets in errors are
    /// within the decoded segment.
    private static func object(_ bytes: [UInt8], _ name: String) throws(ReceiptError) -> JSONValue {
        let value: JSONValue
        do throws(ReceiptError) {
            value = try bytes.withUnsafeBufferPointer { (buffer) throws(ReceiptError) in
                try JSONValue.parse(buffer, limits: .signedData)
            }
        } catch {
            throw ReceiptError(error.status, at: error.offset, "the JWS \(name): \(error.detail)")
        }
        guard case .object = value else {
            throw ReceiptError(.notAnObject, "the JWS \(name) is \(value.kindName), not a JSON object")
        }
        return value
    }
}
