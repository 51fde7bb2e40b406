/// A small streaming JSON writer: objects and arrays with correct commas, strings
/// escaped per RFC 8259. Output is UTF-8 bytes, which is what every caller wants.
@_spi(ReceiptInternal) public struct JSONWriter {
    public private(set) var bytes: [UInt8] = []
    private var needsComma: [Bool] = [false]
    private let indentStep: Int?

    /// `indent` nil writes compact JSON; a number pretty-prints with that many spaces.
    /// `capacity`: the bytes expected, reserved at once when the caller knows the size.
    public init(indent: Int? = nil, capacity: Int = 0) {
        indentStep = indent
        bytes.reserveCapacity(capacity)
    }

    public var string: String { String(decoding: bytes, as: UTF8.self) }

    /// Compact output: a value rendered once may be written again with `raw` anywhere.
    public var isCompact: Bool { indentStep == nil }

    public mutating func beginObject(_ key: String? = nil) { open(key, UInt8(ascii: "{")) }
    public mutating func endObject() { close(UInt8(ascii: "}")) }
    public mutating func beginArray(_ key: String? = nil) { open(key, UInt8(ascii: "[")) }
    public mutating func endArray() { close(UInt8(ascii: "]")) }

    public mutating func string(_ key: String?, _ value: String) {
        member(key)
        appendQuoted(value)
    }

    public mutating func number(_ key: String?, _ value: Int64) {
        member(key)
        bytes.append(contentsOf: String(value).utf8)
    }

    public mutating func bool(_ key: String?, _ value: Bool) {
        member(key)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// Members named by static text (a field's own name, and a suffix such as
    /// "_ms"): no String is made for the key. The name must need no escape.
    public mutating func string(field: StaticString, suffix: StaticString = "", _ value: String) {
        member(field: field, suffix: suffix)
        appendQuoted(value)
    }

    public mutating func number(field: StaticString, _ value: Int64) {
        member(field: field, suffix: "")
        bytes.append(contentsOf: String(value).utf8)
    }

    /// A string member whose text `write` appends itself: only for text that needs
    /// no escape (digits, the App Store's date forms, base64), so none is looked for.
    public mutating func unescapedString(field: StaticString, suffix: StaticString = "", _ write: (inout [UInt8]) -> Void) {
        member(field: field, suffix: suffix)
        bytes.append(UInt8(ascii: "\""))
        write(&bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// A value that is already JSON (checked by the caller's parse), written as it is.
    public mutating func raw(_ key: String?, _ json: [UInt8]) {
        member(key)
        bytes.append(contentsOf: json)
    }

    public mutating func null(_ key: String?) {
        member(key)
        bytes.append(contentsOf: "null".utf8)
    }

    private mutating func open(_ key: String?, _ bracket: UInt8) {
        member(key)
        bytes.append(bracket)
        needsComma.append(false)
    }

    private mutating func close(_ bracket: UInt8) {
        let hadMembers = needsComma.removeLast()
        if hadMembers { newline() }
        bytes.append(bracket)
    }

    private mutating func member(_ key: String?) {
        if needsComma[needsComma.count - 1] { bytes.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
        if needsComma.count > 1 { newline() }
        if let key {
            appendQuoted(key)
            bytes.append(UInt8(ascii: ":"))
            if indentStep != nil { bytes.append(UInt8(ascii: " ")) }
        }
    }

    private mutating func member(field: StaticString, suffix: StaticString) {
        member(nil)
        bytes.append(UInt8(ascii: "\""))
        field.withUTF8Buffer { bytes.append(contentsOf: $0) }
        suffix.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        if indentStep != nil { bytes.append(UInt8(ascii: " ")) }
    }

    private mutating func newline() {
        guard let indentStep else { return }
        bytes.append(UInt8(ascii: "\n"))
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: (needsComma.count - 1) * indentStep))
    }

    /// Copies runs that need no escape in one append each, found eight bytes a step
    /// (JSONText.firstSpecial): receipt text rarely holds anything to escape, and a
    /// verifyReceipt answer is mostly one long base64 string.
    private mutating func appendQuoted(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var runStart = 0
            while true {
                let special = JSONText.firstSpecial(utf8, from: runStart)
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<special]))
                guard special < utf8.count else { break }
                appendEscaped(utf8[special])
                runStart = special + 1
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func appendEscaped(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), byte]
        case UInt8(ascii: "\n"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
        case UInt8(ascii: "\r"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
        case UInt8(ascii: "\t"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
        default:
            let hex = Array("0123456789abcdef".utf8)
            bytes += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
        }
    }
}

/// Writes a member only when its value exists: App Store JSON leaves absent fields out.
func ifPresent<T>(_ value: T?, _ write: (T) -> Void) {
    if let value { write(value) }
}

extension JSONWriter {
    /// A decoded JSON value, members in name order (a JSONValue keeps no order).
    /// Numbers are written as they were read.
    public mutating func value(_ key: String?, _ value: JSONValue) {
        switch value {
        case .null: null(key)
        case .bool(let flag): bool(key, flag)
        case .number(let text): raw(key, Array(text.utf8))
        case .string(let text): string(key, text)
        case .array(let items):
            beginArray(key)
            for item in items { self.value(nil, item) }
            endArray()
        case .object(let members):
            beginObject(key)
            for name in members.keys.sorted() { self.value(name, members[name]!) }
            endObject()
        }
    }
}
