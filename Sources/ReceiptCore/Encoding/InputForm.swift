#if canImport(Glibc)
import Glibc
#endif

/// What a caller's bytes turn out to be, decided before any parsing, so that a
/// legacy receipt, a JWS or a PEM file gets its own status instead of a
/// misleading "malformed DER".
enum InputForm {
    /// What the caller's bytes are, once size, emptiness and the known
    /// non-receipts (legacy plists, PEM, JWS) are ruled out.
    enum Kind {
        /// DER/BER bytes from the first byte on.
        case der
        /// Base64 text, its first non-whitespace byte at `firstIndex`.
        case base64(firstIndex: Int)
    }

    static func kind(of input: UnsafeBufferPointer<UInt8>, limits: ParseLimits) throws(ReceiptError) -> Kind {
        let maxInputBytes = min(limits.maxInputBytes, ParseLimits.ceilingInputBytes)
        guard input.count <= maxInputBytes else {
            throw ReceiptError(.inputTooLarge, "input of \(input.count) bytes exceeds the limit of \(maxInputBytes)")
        }
        guard !input.isEmpty else { throw ReceiptError(.emptyInput, "the input is empty") }
        guard let firstIndex = input.firstIndex(where: { !Base64.isWhitespace($0) }) else {
            throw ReceiptError(.emptyInput, "the input holds only whitespace (\(input.count) bytes)")
        }
        let first = input[firstIndex]
        if first == BERTag.sequence && firstIndex == 0 { return .der }
        try rejectKnownNonReceipts(input, first: first, at: firstIndex)
        return .base64(firstIndex: firstIndex)
    }

    /// Decodes base64 `input` into `buffer` (of at least `Base64.maxDecodedCount(input)`
    /// bytes) and checks that it holds a receipt's DER; returns the decoded count.
    static func decodeBase64(_ input: UnsafeBufferPointer<UInt8>, firstIndex: Int,
                             into buffer: UnsafeMutableBufferPointer<UInt8>) throws(ReceiptError) -> Int {
        let count: Int
        do {
            count = try Base64.decode(input, into: buffer)
        } catch {
            // Binary input always fails to decode, so telling it apart from bad
            // base64 text waits until then instead of costing a pass over every input.
            guard isText(input) else {
                throw ReceiptError(.notAReceipt, at: firstIndex, "first byte 0x\(hexByte(input[firstIndex])) starts "
                                   + "neither a DER SEQUENCE (0x30) nor base64 text")
            }
            // Text with a character base64 never has (prose, a typo) is no receipt, and
            // without its dots no JWS: say that, not how its base64 failed.
            if let stray = input.firstIndex(where: { !Base64.mayAppear($0) }) {
                throw ReceiptError(.badBase64, at: stray, "text that is neither a receipt (DER, or base64) nor a "
                                   + "JWS (three base64url segments joined by two dots): byte 0x\(hexByte(input[stray])) "
                                   + "is in neither alphabet")
            }
            throw error
        }
        let decoded = UnsafeBufferPointer(rebasing: buffer[0..<count])
        guard let decodedFirst = decoded.first else {
            throw ReceiptError(.emptyInput, "the base64 text decodes to no bytes")
        }
        try rejectKnownNonReceipts(decoded, first: decodedFirst, at: 0, decodedFromBase64: true)
        guard decodedFirst == BERTag.sequence else {
            throw ReceiptError(.notAReceipt, at: 0,
                               "the base64 text decodes to bytes starting 0x\(hexByte(decodedFirst)), not a DER SEQUENCE (0x30)")
        }
        return count
    }

    private static func rejectKnownNonReceipts(_ input: UnsafeBufferPointer<UInt8>, first: UInt8, at offset: Int,
                                               decodedFromBase64: Bool = false) throws(ReceiptError) {
        let via = decodedFromBase64 ? " (after base64 decoding)" : ""
        if first == UInt8(ascii: "{") && contains(input, "\"signature\"") {
            throw ReceiptError(.legacyReceipt, at: offset,
                               "an iOS 6 transactionReceipt property list\(via); these are not PKCS #7 and cannot be verified locally")
        }
        if first == UInt8(ascii: "-") && startsWith(input, from: offset, "-----BEGIN") {
            throw ReceiptError(.unsupportedFormat, at: offset,
                               "PEM armour\(via); pass the raw DER bytes or the bare base64 body")
        }
        if !decodedFromBase64, let mistake = InputShape.mistake(in: trimmed(input, from: offset)) {
            throw ReceiptError(.unsupportedFormat, at: offset, mistake)
        }
        if !decodedFromBase64 && looksLikeJWS(input) {
            throw ReceiptError(.unsupportedFormat, at: offset,
                               "a JWS (StoreKit 2 signed data), not an app receipt: verify it as a JWS "
                               + "(C receipt_verify_jws, Python Verifier.verify_jws, CLI receipt verify reads both)")
        }
    }

    /// `input` from `offset` without its trailing whitespace.
    private static func trimmed(_ input: UnsafeBufferPointer<UInt8>, from offset: Int) -> UnsafeBufferPointer<UInt8> {
        let end = (input.lastIndex { !Base64.isWhitespace($0) } ?? offset) + 1
        return UnsafeBufferPointer(rebasing: input[offset..<max(offset, end)])
    }

    private static func isText(_ input: UnsafeBufferPointer<UInt8>) -> Bool {
        input.allSatisfy { $0 >= 0x20 && $0 < 0x7F || Base64.isWhitespace($0) }
    }

    /// Text with dots: no receipt, DER or base64, has a '.'. Segments of base64url
    /// (or '=') with any number of dots are meant as a JWS, and so is any text with
    /// exactly two, a compact JWS's count: whatever else is wrong with it (a '+' or '!'
    /// typed into a segment) its decode then names as a JWS error at its byte, not as
    /// a receipt's base64 error. Binary input (DER may hold 0x2E bytes) is never a JWS.
    static func looksLikeJWS(_ input: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = input.baseAddress, memchr(base, Int32(UInt8(ascii: ".")), input.count) != nil else { return false }
        var dots = 0
        var onlyBase64URL = true
        for byte in input where !Base64.isWhitespace(byte) {
            switch byte {
            case UInt8(ascii: "."): dots += 1
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "="):
                continue
            case 0x20..<0x7F: onlyBase64URL = false
            default: return false
            }
        }
        return onlyBase64URL || dots == 2
    }

    private static func startsWith(_ input: UnsafeBufferPointer<UInt8>, from offset: Int, _ prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard input.count - offset >= count else { return false }
        let prefixBytes = UnsafeBufferPointer(start: prefix.utf8Start, count: count)
        return prefixBytes.elementsEqual(input[offset..<offset + count])
    }

    private static func contains(_ input: UnsafeBufferPointer<UInt8>, _ needle: StaticString) -> Bool {
        let count = needle.utf8CodeUnitCount
        guard input.count >= count else { return false }
        for offset in 0...(input.count - count) where startsWith(input, from: offset, needle) { return true }
        return false
    }
}

/// Which signed format a caller's bytes are in, for callers that take both (the
/// CLI, the server): a compact JWS, or else a receipt (whose own parse then names
/// what is wrong with anything else).
public enum SignedFormat: Sendable {
    case receipt, jws

    public init(of bytes: [UInt8]) {
        self = bytes.withUnsafeBufferPointer { InputForm.looksLikeJWS($0) } ? .jws : .receipt
    }
}
