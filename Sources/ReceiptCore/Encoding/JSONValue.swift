/// A parsed JSON document (RFC 8259), for the App Store's responses and the
/// product catalogs callers pass in. Numbers keep their text, so 64-bit ids and
/// millisecond dates lose nothing.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// What kind of value this is, for details: "null", "a number", "an object", ...
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    public var stringValue: String? { if case .string(let text) = self { return text }; return nil }
    public var arrayValue: [JSONValue]? { if case .array(let items) = self { return items }; return nil }
    public var boolValue: Bool? { if case .bool(let flag) = self { return flag }; return nil }

    /// An integer given as a JSON number or as a string of digits, as Apple mixes both.
    public var int64Value: Int64? {
        switch self {
        case .number(let text), .string(let text): Int64(text)
        default: nil
        }
    }

    /// A number's value when it is a whole number within Int64, however JSON writes it
    /// (`10`, `10.0`, `1e1`, `1.5E+1`: JSON Schema's "integer" is any number with no fraction,
    /// as a client's float serializer writes them); nil for a fraction, an overflow, or anything
    /// that is no JSON number.
    public var integralValue: Int64? {
        guard case .number(let text) = self else { return nil }
        if let whole = Int64(text) { return whole }
        let zero = UInt8(ascii: "0")
        var bytes = Substring(text).utf8[...]
        let negative = bytes.first == UInt8(ascii: "-")
        if negative { bytes = bytes.dropFirst() }
        let mantissaEnd = bytes.firstIndex { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") } ?? bytes.endIndex
        var exponent = 0
        if mantissaEnd != bytes.endIndex {
            var written = bytes[bytes.index(after: mantissaEnd)...]
            let negativeExponent = written.first == UInt8(ascii: "-")
            if written.first == UInt8(ascii: "-") || written.first == UInt8(ascii: "+") { written = written.dropFirst() }
            guard !written.isEmpty, written.allSatisfy({ (zero...zero + 9).contains($0) }) else { return nil }
            // Saturated: past 10,000 a nonzero mantissa has overflowed or left a fraction either way.
            for digit in written { exponent = min(exponent * 10 + Int(digit - zero), 10_000) }
            if negativeExponent { exponent = -exponent }
        }
        let mantissa = bytes[..<mantissaEnd]
        let point = mantissa.firstIndex(of: UInt8(ascii: "."))
        var digits = Array(mantissa[..<(point ?? mantissa.endIndex)])
        if let point { digits += mantissa[mantissa.index(after: point)...]; exponent -= mantissa.distance(from: point, to: mantissa.endIndex) - 1 }
        guard !digits.isEmpty, digits.allSatisfy({ (zero...zero + 9).contains($0) }) else { return nil }
        // Digits moved past the point must all be zeros; then the value is the rest, times 10^exponent.
        while exponent < 0, let last = digits.last {
            guard last == zero else { return nil }
            digits.removeLast()
            exponent += 1
        }
        guard digits.contains(where: { $0 != zero }) else { return 0 }
        // Accumulated on the number's side of zero, so that Int64.min is reached too.
        var value: Int64 = 0
        for digit in digits + Array(repeating: zero, count: min(max(exponent, 0), 20)) {
            let (times, overflowed) = value.multipliedReportingOverflow(by: 10)
            let step = Int64(digit - zero)
            let (sum, overflowedAgain) = negative ? times.subtractingReportingOverflow(step) : times.addingReportingOverflow(step)
            guard !overflowed, !overflowedAgain else { return nil }
            value = sum
        }
        return value
    }

    /// A number's value as epoch milliseconds: its integer part, any fraction cut toward
    /// minus infinity (Xcode writes fractions of a millisecond). Nil for anything
    /// else: a string, an exponent, or a value outside Int64.
    public var epochMilliseconds: Int64? {
        guard case .number(let text) = self else { return nil }
        // In place (withUTF8Bytes): a read of a stored subscription asks a dozen dates.
        return text.withUTF8Bytes(Self.epochMilliseconds(ofNumber:))
    }

    private static func epochMilliseconds(ofNumber text: UnsafeBufferPointer<UInt8>) -> Int64? {
        var value: Int64 = 0
        var negative = false
        var fractionNonZero = false
        var inFraction = false
        var digits = 0
        for byte in text {
            switch byte {
            case UInt8(ascii: "-") where digits == 0 && !negative:
                negative = true
            case UInt8(ascii: "."):
                guard !inFraction else { return nil }
                inFraction = true
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if inFraction {
                    fractionNonZero = fractionNonZero || byte != UInt8(ascii: "0")
                    continue
                }
                digits += 1
                let (shifted, overflowShift) = value.multipliedReportingOverflow(by: 10)
                let digit = Int64(byte - UInt8(ascii: "0"))
                let (next, overflowAdd) = negative ? shifted.subtractingReportingOverflow(digit)
                                                   : shifted.addingReportingOverflow(digit)
                guard !overflowShift, !overflowAdd else { return nil }
                value = next
            default:
                return nil  // an exponent: no date Apple writes has one
            }
        }
        guard digits > 0 else { return nil }
        guard negative && fractionNonZero else { return value }
        let (floored, overflow) = value.subtractingReportingOverflow(1)
        return overflow ? nil : floored
    }

    public static func parse(_ text: String, maxDepth: Int = 64) throws(ReceiptError) -> JSONValue {
        var limits = JSONLimits.unbounded
        limits.maxDepth = maxDepth
        return try Array(text.utf8).withUnsafeBufferPointer { (bytes) throws(ReceiptError) in
            try parse(bytes, limits: limits)
        }
    }

    /// The members of a document that must be one object (a rules file, a request body):
    /// refused past `maxBytes` (`RECEIPT_E_INPUT_TOO_LARGE`) and when it is another kind of
    /// value (`RECEIPT_E_NOT_AN_OBJECT`), `what` naming it in the detail.
    public static func object(_ bytes: [UInt8], maxBytes: Int, limits: JSONLimits,
                              naming what: String) throws(ReceiptError) -> [String: JSONValue] {
        guard bytes.count <= maxBytes else { throw ReceiptError(.inputTooLarge, "\(what) is over \(maxBytes) bytes") }
        let document = try bytes.withUnsafeBufferPointer { (buffer) throws(ReceiptError) in try parse(buffer, limits: limits) }
        guard case .object(let members) = document else {
            throw ReceiptError(.notAnObject, "\(what) is \(document.kindName), not an object")
        }
        return members
    }

    /// One JSON document, exactly: RFC 8259 with UTF-8 checked, no member name twice
    /// in an object (`RECEIPT_E_DUPLICATE_MEMBER`), nesting and the number of values
    /// bounded by `limits` (`RECEIPT_E_NESTING_TOO_DEEP`, `RECEIPT_E_LIMIT_EXCEEDED`).
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>, limits: JSONLimits) throws(ReceiptError) -> JSONValue {
        if let invalid = UTF8Validation.firstInvalidOffset(bytes, in: 0..<bytes.count) {
            throw ReceiptError(.badUTF8, at: invalid, "the JSON text is not valid UTF-8")
        }
        var parser = JSONParser(bytes: bytes, limits: limits)
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.error("text follows the JSON value") }
        return value
    }
}

/// Bounds on one JSON document, so that its cost follows its size.
public struct JSONLimits: Sendable {
    /// Deepest nesting of arrays and objects.
    public var maxDepth: Int
    /// Most values (members and array items included) in the whole document.
    public var maxValues: Int

    /// For the library's own trusted-shape inputs (catalogs, App Store responses): depth only.
    static let unbounded = JSONLimits(maxDepth: 64, maxValues: Int.max)
    /// For signed payloads and JWS headers (receipt.h's limits): far above Apple's
    /// (depth 4, under 100 values), far below what would cost a server.
    public static let signedData = JSONLimits(maxDepth: 16, maxValues: 10_000)
}

private struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    let limits: JSONLimits
    var index = 0
    var values = 0

    init(bytes: UnsafeBufferPointer<UInt8>, limits: JSONLimits) {
        self.bytes = bytes
        self.limits = limits
    }

    func error(_ detail: String) -> ReceiptError { ReceiptError(.badJSON, at: index, detail) }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func value(depth: Int) throws(ReceiptError) -> JSONValue {
        guard depth < limits.maxDepth else {
            throw ReceiptError(.nestingTooDeep, at: index, "JSON nested deeper than \(limits.maxDepth)")
        }
        values += 1
        guard values <= limits.maxValues else {
            throw ReceiptError(.limitExceeded, at: index, "the JSON document holds more than \(limits.maxValues) values")
        }
        skipWhitespace()
        guard index < bytes.count else { throw error("the text ends where a value should be") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default: return .number(try number())
        }
    }

    mutating func object(depth: Int) throws(ReceiptError) -> JSONValue {
        index += 1
        // The members are gathered first and hashed once into a table of their number: a
        // table grown member by member would hash them all again at each doubling.
        var members: [(name: String, value: JSONValue, colon: Int)] = []
        members.reserveCapacity(16)  // a payload's objects hold 1 to 40 members
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "}") { index += 1; return .object([:]) }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a member name") }
            let name = try string()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
            let colon = index
            index += 1
            members.append((name, try value(depth: depth + 1), colon))
            skipWhitespace()
            guard index < bytes.count else { throw error("an object is not closed") }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(try Self.table(of: members)) }
            guard bytes[index] == UInt8(ascii: ",") else { throw error("expected ',' or '}'") }
            index += 1
        }
    }

    /// An object's members by name. Two readers of one document must not disagree on
    /// what it says: a repeated name (which other parsers resolve first-wins or
    /// last-wins) is refused, at the ':' after its second spelling.
    static func table(of members: [(name: String, value: JSONValue, colon: Int)]) throws(ReceiptError) -> [String: JSONValue] {
        var table = [String: JSONValue](minimumCapacity: members.count)
        for (name, value, colon) in members {
            guard table.updateValue(value, forKey: name) == nil else {
                throw ReceiptError(.duplicateMember, at: colon, "the member name \"\(name)\" appears twice in one object")
            }
        }
        return table
    }

    mutating func array(depth: Int) throws(ReceiptError) -> JSONValue {
        index += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
        while true {
            items.append(try value(depth: depth + 1))
            skipWhitespace()
            guard index < bytes.count else { throw error("an array is not closed") }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
            guard bytes[index] == UInt8(ascii: ",") else { throw error("expected ',' or ']'") }
            index += 1
        }
    }

    mutating func string() throws(ReceiptError) -> String {
        index += 1
        // Most strings hold no escape: one scan, one String made from the bytes
        // (already checked to be UTF-8).
        let start = index
        index = JSONText.firstSpecial(bytes, from: index)
        if index < bytes.count && bytes[index] == UInt8(ascii: "\"") {
            index += 1
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index - 1]), as: UTF8.self)
        }
        // The slow path, for strings with escapes: the decoded text is built as UTF-8
        // bytes in one buffer and made a String once, so its cost is linear in the
        // string's length whatever the mix of escapes and plain runs (appending to a
        // String's scalars escape by escape was quadratic).
        index = start
        var decoded: [UInt8] = []
        while index < bytes.count {
            let runStart = index
            index = JSONText.firstSpecial(bytes, from: index)
            decoded.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
            guard index < bytes.count else { break }
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: decoded, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { break }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escape)
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0C)
                case UInt8(ascii: "n"): decoded.append(0x0A)
                case UInt8(ascii: "r"): decoded.append(0x0D)
                case UInt8(ascii: "t"): decoded.append(0x09)
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800..<0xDC00).contains(code), index + 1 < bytes.count,
                       bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") {
                        index += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw error("a lone surrogate") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw error("a lone surrogate") }
                    UTF8.encode(scalar) { decoded.append($0) }
                default:
                    throw error("unknown escape \\\(Character(Unicode.Scalar(escape)))")
                }
            default:
                throw error("a control character inside a string")
            }
        }
        throw error("a string is not closed")
    }

    mutating func hex4() throws(ReceiptError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("\\u needs four hex digits") }
        var code: UInt32 = 0
        for byte in bytes[index..<index + 4] {
            // Digits only: UInt32(_:radix:) would also take a sign.
            guard let digit = hexDigitValue(byte) else { throw error("\\u needs four hex digits") }
            code = code << 4 | UInt32(digit)
        }
        index += 4
        return code
    }

    mutating func literal(_ word: StaticString) throws(ReceiptError) {
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        guard index + expected.count <= bytes.count, bytes[index..<index + expected.count].elementsEqual(expected) else {
            throw error("expected \(word)")
        }
        index += expected.count
    }

    /// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, and nothing looser.
    mutating func number() throws(ReceiptError) -> String {
        let start = index
        func digits() -> Int {
            let first = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
            return index - first
        }
        if index < bytes.count && bytes[index] == UInt8(ascii: "-") { index += 1 }
        let integerStart = index
        guard digits() > 0 else { throw error("expected a value") }
        if bytes[integerStart] == UInt8(ascii: "0") && index - integerStart > 1 { throw error("a number with a leading zero") }
        if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw error("a fraction without digits") }
        }
        if index < bytes.count && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
            index += 1
            if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) { index += 1 }
            guard digits() > 0 else { throw error("an exponent without digits") }
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }
}

/// What JSON's reader and writer share about string text.
enum JSONText {
    /// The index of the first '"', '\\' or control character at or after `start`
    /// (`bytes.count` if none), sixteen bytes a step, then eight: long strings (a JWS's
    /// x5c, a stored JWS written into an answer) are most of a header and of an answer.
    static func firstSpecial(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard let base = bytes.baseAddress else { return start }
        var index = start
        let quotes = SIMD16<UInt8>(repeating: UInt8(ascii: "\"")), backslashes = SIMD16<UInt8>(repeating: UInt8(ascii: "\\"))
        let spaces = SIMD16<UInt8>(repeating: 0x20)
        while bytes.count &- index >= 16 {
            let chunk = UnsafeRawPointer(base + index).loadUnaligned(as: SIMD16<UInt8>.self)
            if any(chunk .== quotes .| chunk .== backslashes .| chunk .< spaces) { break }
            index &+= 16
        }
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        while bytes.count &- index >= 8 {
            let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            let quote = word ^ (ones &* 0x22), backslash = word ^ (ones &* 0x5C)
            // A byte is zero in `quote` (or `backslash`) where it was '"' ('\\'); a byte
            // below 0x20 borrows in `word - 0x20...`. False hits only follow a true one.
            let hits = ((quote &- ones) & ~quote | (backslash &- ones) & ~backslash | (word &- ones &* 0x20) & ~word) & highs
            if hits != 0 { break }
            index &+= 8
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { return index }
            index += 1
        }
        return index
    }
}
