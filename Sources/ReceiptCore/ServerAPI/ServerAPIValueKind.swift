/// What one argument of an App Store Server API call may hold, as Apple documents
/// it, so that a request Apple would refuse is refused here first, with a clear
/// error, and never sent. Each kind also turns what a caller gives (JSON from C,
/// Python or the command line, where numbers may come as text) into the one JSON
/// value sent.
///
/// A struct of plain fields rather than an indirect enum: the call table lives
/// for the whole process, and LeakSanitizer cannot follow the tagged pointers of
/// enum payloads, so it would report every box of the table as lost.
struct ServerAPIValueKind: Sendable {
    enum Shape: Sendable {
        case transactionID, identifier, uuid, locale, epochMilliseconds, integer, bool, text, names, httpsURL,
             storefront, currency, png, list, object
    }

    /// The list element's kind, boxed so that a kind can hold a kind.
    final class Element: Sendable {
        let kind: ServerAPIValueKind
        init(_ kind: ServerAPIValueKind) { self.kind = kind }
    }

    let shape: Shape
    /// identifier: bytes; text: characters; list: items.
    var maxLength = 0
    var range: ClosedRange<Int64> = 0...0
    var names: [String] = []
    var element: Element?
    var members: [ServerAPIMember] = []

    /// A transaction id, original transaction id or app transaction id: digits.
    static let transactionID = Self(shape: .transactionID)
    /// Text Apple defines no grammar for (product ids, order ids, tokens):
    /// printable ASCII without spaces, 1 to `maxLength` bytes.
    static func identifier(maxLength: Int) -> Self { Self(shape: .identifier, maxLength: maxLength) }
    /// A UUID in its 36-character text form; sent lower-cased.
    static let uuid = Self(shape: .uuid)
    /// A BCP 47 locale such as `en-US`.
    static let locale = Self(shape: .locale)
    /// An instant in milliseconds since 1970, any from 0 ("from the beginning") on, as
    /// Apple documents transaction history's startDate and endDate.
    static let epochMilliseconds = Self(shape: .epochMilliseconds, range: 0...latestMilliseconds)
    /// The same from 2008-01-01 on (no App Store before): notification history, whose
    /// window Apple keeps to recent days and refuses earlier starts.
    static let appStoreEraMilliseconds = Self(shape: .epochMilliseconds, range: earliestMilliseconds...latestMilliseconds)
    static func integer(_ range: ClosedRange<Int64>) -> Self { Self(shape: .integer, range: range) }
    static let bool = Self(shape: .bool)
    /// Free text (UTF-8) of at most `maxCharacters` characters.
    static func text(maxCharacters: Int) -> Self { Self(shape: .text, maxLength: maxCharacters) }
    /// One of Apple's names, exactly.
    static func names(_ names: [String]) -> Self { Self(shape: .names, names: names) }
    /// An `https` URL.
    static let httpsURL = Self(shape: .httpsURL)
    /// An ISO 3166-1 alpha-3 storefront code such as `USA`.
    static let storefront = Self(shape: .storefront)
    /// An ISO 4217 currency code such as `USD`.
    static let currency = Self(shape: .currency)
    /// Base64 of a PNG file (the body of upload_image).
    static let png = Self(shape: .png)
    static func list(_ element: ServerAPIValueKind, max: Int) -> Self {
        Self(shape: .list, maxLength: max, element: Element(element))
    }
    static func object(_ members: [ServerAPIMember]) -> Self { Self(shape: .object, members: members) }

    /// The App Store opened on 2008-07-10; no date Apple keeps is earlier than 2008.
    static let earliestMilliseconds: Int64 = 1_199_145_600_000
    /// The last millisecond of 2999.
    static let latestMilliseconds: Int64 = 32_503_679_999_999
    static let maxIdentifierBytes = 256

    /// The value to send for `value`, or an error that names `name`.
    func normalized(_ value: JSONValue, name: String) throws(ReceiptError) -> JSONValue {
        switch shape {
        case .transactionID:
            let text = try Self.text(value, name: name, numbersAllowed: true)
            guard (1...20).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
                throw Self.refused(name, "1 to 20 digits (a transaction id)", value)
            }
            return .string(text)
        case .identifier:
            let text = try Self.text(value, name: name, numbersAllowed: true)
            guard (1...maxLength).contains(text.utf8.count), text.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
                throw Self.refused(name, "1 to \(maxLength) printable ASCII characters without spaces", value)
            }
            // HTTP clients (curl, every RFC 3986 normalizer) resolve these as path segments.
            guard text != ".", text != ".." else {
                throw Self.refused(name, "an identifier other than \".\" and \"..\" (which HTTP clients resolve as paths)", value)
            }
            return .string(text)
        case .uuid:
            let text = try Self.text(value, name: name)
            guard UUIDText.isWellFormed(text) else { throw Self.refused(name, "a UUID (8-4-4-4-12 hexadecimal digits)", value) }
            return .string(text.lowercased())
        case .locale:
            let text = try Self.text(value, name: name)
            let parts = text.split(separator: "-", omittingEmptySubsequences: false)
            guard (1...3).contains(parts.count), parts.allSatisfy({ (2...8).contains($0.count) && $0.utf8.allSatisfy(Self.isAlphanumeric) }) else {
                throw Self.refused(name, "a locale such as en-US", value)
            }
            return .string(text)
        case .epochMilliseconds:
            let number = try Self.integer(value, name: name)
            guard range.contains(number) else {
                let from = range.lowerBound == 0 ? "from 0" : "from 2008"
                throw Self.refused(name, "milliseconds since 1970, \(from) to 2999", value)
            }
            return .number(String(number))
        case .integer:
            let number = try Self.integer(value, name: name)
            guard range.contains(number) else { throw Self.refused(name, "an integer from \(range.lowerBound) to \(range.upperBound)", value) }
            return .number(String(number))
        case .bool:
            if let flag = value.boolValue { return .bool(flag) }
            if let text = value.stringValue, text == "true" || text == "false" { return .bool(text == "true") }
            throw Self.refused(name, "true or false", value)
        case .text:
            let text = try Self.text(value, name: name)
            guard !text.isEmpty, text.count <= maxLength else { throw Self.refused(name, "1 to \(maxLength) characters", value) }
            return .string(text)
        case .names:
            let text = try Self.text(value, name: name)
            guard names.contains(text) else { throw Self.refused(name, "one of \(names.joined(separator: ", "))", value) }
            return .string(text)
        case .httpsURL:
            let text = try Self.text(value, name: name)
            guard text.hasPrefix("https://"), text.utf8.count > 8, text.utf8.count <= 2048,
                  text.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
                throw Self.refused(name, "an https URL", value)
            }
            return .string(text)
        case .storefront, .currency:
            let text = try Self.text(value, name: name)
            guard text.utf8.count == 3, text.utf8.allSatisfy({ (0x41...0x5A).contains($0) }) else {
                throw Self.refused(name, shape == .storefront ? "an ISO 3166-1 alpha-3 code such as USA"
                                                               : "an ISO 4217 code such as USD", value)
            }
            return .string(text)
        case .png:
            let text = try Self.text(value, name: name)
            guard let bytes = try? Base64.decode(Array(text.utf8)), bytes.starts(with: Self.pngSignature) else {
                throw Self.refused(name, "base64 of a PNG file", value)
            }
            return .string(text)
        case .list:
            let items = value.arrayValue ?? [value]
            guard (1...maxLength).contains(items.count), let element else {
                throw ReceiptError(.invalidArgument, "\(name): 1 to \(maxLength) values; \(items.count) given")
            }
            var normalizedItems: [JSONValue] = []
            for (index, item) in items.enumerated() {
                normalizedItems.append(try element.kind.normalized(item, name: "\(name)[\(index)]"))
            }
            return .array(normalizedItems)
        case .object:
            guard case .object(let given) = value else { throw Self.refused(name, "an object", value) }
            return .object(try ServerAPIMember.normalize(given, members: members, within: name))
        }
    }

    /// The value's text in a query string or URL path (after `normalized`).
    static func queryText(_ value: JSONValue) -> String {
        switch value {
        case .string(let text), .number(let text): text
        case .bool(let flag): flag ? "true" : "false"
        default: ""
        }
    }

    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    private static func text(_ value: JSONValue, name: String, numbersAllowed: Bool = false) throws(ReceiptError) -> String {
        if let text = value.stringValue { return text }
        if numbersAllowed, case .number(let digits) = value { return digits }
        throw refused(name, "text", value)
    }

    private static func integer(_ value: JSONValue, name: String) throws(ReceiptError) -> Int64 {
        if let number = value.integralValue { return number }
        if let text = value.stringValue, let number = Int64(text) { return number }
        throw refused(name, "an integer", value)
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    private static func refused(_ name: String, _ expected: String, _ value: JSONValue) -> ReceiptError {
        ReceiptError(.invalidArgument, "\(name) must be \(expected); got \(given(value))")
    }

    /// What was given, as a person typed it: a number as itself (from the command line it
    /// arrives as text), other text quoted, anything else by its kind.
    private static func given(_ value: JSONValue) -> String {
        switch value {
        case .number(let digits): return digits
        case .string(let text) where Int64(text) != nil: return text
        case .string(let text): return quoted(String(text.prefix(64)))
        default: return value.kindName
        }
    }
}

/// One member of a request body object, or one argument of a call.
struct ServerAPIMember: Sendable {
    let name: String
    let kind: ServerAPIValueKind
    let required: Bool

    init(_ name: String, _ kind: ServerAPIValueKind, required: Bool = false) {
        self.name = name
        self.kind = kind
        self.required = required
    }

    /// `given` with each member normalized; unknown and missing required members refused.
    /// A null member counts as absent (Python's None, a JSON null).
    static func normalize(_ given: [String: JSONValue], members: [ServerAPIMember],
                          within context: String) throws(ReceiptError) -> [String: JSONValue] {
        let prefix = context.isEmpty ? "" : "\(context)."
        for key in given.keys.sorted() where !members.contains(where: { $0.name == key }) {
            throw ReceiptError(.invalidArgument, "\(prefix)\(key) is not a member here; known: "
                               + members.map(\.name).joined(separator: ", "))
        }
        var result: [String: JSONValue] = [:]
        for member in members {
            guard let value = given[member.name], value != .null else {
                if member.required { throw ReceiptError(.invalidArgument, "\(prefix)\(member.name) is required") }
                continue
            }
            result[member.name] = try member.kind.normalized(value, name: prefix + member.name)
        }
        return result
    }
}
