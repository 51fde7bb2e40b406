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

    public static func parse(_ text: String, maxDepth: Int = 64) throws(ReceiptError) -> JSONValue {
        var parser = JSONParser(bytes: Array(text.utf8), maxDepth: maxDepth)
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw parser.error("text follows the JSON value") }
        return value
    }
}

private struct JSONParser {
    let bytes: [UInt8]
    let maxDepth: Int
    var index = 0

    init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    func error(_ detail: String) -> ReceiptError { ReceiptError(.badJSON, at: index, detail) }

    mutating func skipWhitespace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    mutating func value(depth: Int) throws(ReceiptError) -> JSONValue {
        guard depth < maxDepth else { throw error("nested deeper than \(maxDepth)") }
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
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a member name") }
            let key = try string()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
            // Two readers of one document must not disagree on what it says: a repeated
            // name (which other parsers resolve first-wins or last-wins) is refused.
            guard members[key] == nil else { throw error("the member name \"\(key)\" appears twice") }
            index += 1
            members[key] = try value(depth: depth + 1)
            skipWhitespace()
            guard index < bytes.count else { throw error("an object is not closed") }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            guard bytes[index] == UInt8(ascii: ",") else { throw error("expected ',' or '}'") }
            index += 1
        }
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
        var scalars = String.UnicodeScalarView()
        var run: [UInt8] = []
        func flush() {
            scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars)
            run.removeAll(keepingCapacity: true)
        }
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                flush()
                return String(scalars)
            case UInt8(ascii: "\\"):
                flush()
                guard index < bytes.count else { break }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(Unicode.Scalar(escape))
                case UInt8(ascii: "b"): scalars.append("\u{8}")
                case UInt8(ascii: "f"): scalars.append("\u{C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
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
                    scalars.append(scalar)
                default:
                    throw error("unknown escape \\\(Character(Unicode.Scalar(escape)))")
                }
            case 0..<0x20:
                throw error("a control character inside a string")
            default:
                run.append(byte)
            }
        }
        throw error("a string is not closed")
    }

    mutating func hex4() throws(ReceiptError) -> UInt32 {
        guard index + 4 <= bytes.count,
              let code = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16) else {
            throw error("\\u needs four hex digits")
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
