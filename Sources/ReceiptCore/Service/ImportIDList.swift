/// The original transaction ids a store is to be filled with (`receipt import --ids`): one
/// per line, or one named column of a CSV whose first row names the columns (RFC 4180:
/// quoted fields, doubled quotes inside them, CRLF or LF), such as a hosted service's export
/// of its subscribers.
///
/// Each id is Apple's: 1 to `maxDigits` decimal digits. Anything else is refused naming
/// `SOURCE:LINE`, before a single call is made, rather than skipped: a list that silently
/// lost customers would look imported. Blank lines, and empty cells of the column, are
/// skipped and counted (an export lists customers of other stores without an App Store id);
/// an id listed again is kept where it first appears.
public struct ImportIDList: Sendable {
    /// The ids in the order given, each once.
    public let ids: [String]
    /// Names the list, so that an interrupted import resumes only the same list: SHA-256
    /// (hex) of the ids in order, one a line.
    public let identity: String
    /// Ids listed more than once (the later listings).
    public let repeated: Int
    /// Blank lines, or rows whose cell in the column is empty.
    public let empty: Int

    /// The most a list may weigh: about ten million ids.
    public static let maxBytes = 256 << 20
    /// Apple's transaction ids are decimal numbers of up to 19 digits; one more for headroom.
    public static let maxDigits = 20

    /// `text`: the file's bytes; `column`: the CSV column holding the ids (nil: one id per
    /// line); `source`: the file's name, in errors.
    public init(_ text: [UInt8], column: String?, source: String) throws(ReceiptError) {
        guard text.count <= Self.maxBytes else {
            throw ReceiptError(.invalidArgument, "\(source): larger than \(Self.maxBytes >> 20) MiB")
        }
        var body = text[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }  // a spreadsheet's byte-order mark
        var records = CSVRecords(body, quoted: column != nil)
        var pick: Int?
        if let column {
            guard let header = try records.next(source: source) else {
                throw ReceiptError(.invalidArgument, "\(source): empty, and --column \(column) needs a first row naming the columns")
            }
            let names = header.fields.map { $0.trimmingSpaces }
            guard let index = names.firstIndex(of: column) ?? names.firstIndex(where: { $0.lowercased() == column.lowercased() }) else {
                throw ReceiptError(.invalidArgument, "\(source):\(header.line): no column \(column); the columns are "
                                   + names.prefix(20).joined(separator: ", "))
            }
            pick = index
        }
        var ids: [String] = []
        var seen = Set<String>()
        var (repeated, empty) = (0, 0)
        while let record = try records.next(source: source) {
            if record.fields.allSatisfy({ $0.trimmingSpaces.isEmpty }) {  // a blank line, or a row of empty cells
                empty += 1
                continue
            }
            let cell: String
            if let pick {
                guard pick < record.fields.count else {
                    throw ReceiptError(.invalidArgument, "\(source):\(record.line): \(record.fields.count) cell\(record.fields.count == 1 ? "" : "s"), "
                                       + "and the column \(column ?? "") is cell \(pick + 1)")
                }
                cell = record.fields[pick].trimmingSpaces
            } else {
                cell = record.fields.joined(separator: ",").trimmingSpaces
            }
            if cell.isEmpty {
                empty += 1
                continue
            }
            guard cell.utf8.count <= Self.maxDigits, cell.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                let shown = cell.count > 40 ? String(cell.prefix(40)) + "…" : cell
                let hint = column == nil && cell.contains(",") ? " (a CSV? name the column of ids with --column)" : ""
                throw ReceiptError(.invalidArgument, "\(source):\(record.line): \"\(shown)\" is no original transaction id "
                                   + "(1 to \(Self.maxDigits) digits)\(hint)")
            }
            if seen.insert(cell).inserted { ids.append(cell) } else { repeated += 1 }
        }
        guard !ids.isEmpty else {
            throw ReceiptError(.invalidArgument, "\(source): no original transaction id"
                               + (column.map { " in the column \($0)" } ?? "") + ": nothing to import")
        }
        self.ids = ids
        self.repeated = repeated
        self.empty = empty
        identity = hexString(Digest.sha256(Array(ids.joined(separator: "\n").utf8)))
    }
}

/// The records of a CSV (RFC 4180), each with the line it starts on; with `quoted` false,
/// plain lines (a quote is then just a character, and refused as no id).
private struct CSVRecords {
    struct Record {
        let fields: [String]
        let line: Int
    }

    private let bytes: ArraySlice<UInt8>
    private let quoted: Bool
    private var position: Int
    private var line = 1

    init(_ bytes: ArraySlice<UInt8>, quoted: Bool) {
        self.bytes = bytes
        self.quoted = quoted
        position = bytes.startIndex
    }

    mutating func next(source: String) throws(ReceiptError) -> Record? {
        guard position < bytes.endIndex else { return nil }
        let start = line
        var fields: [String] = []
        var field: [UInt8] = []
        var inQuotes = false
        var closed = false  // a quoted cell ended: only a comma or the line's end may follow
        while position < bytes.endIndex {
            let byte = bytes[position]
            position += 1
            if inQuotes {
                if byte == UInt8(ascii: "\"") {
                    if position < bytes.endIndex, bytes[position] == UInt8(ascii: "\"") {
                        field.append(byte)
                        position += 1
                    } else {
                        inQuotes = false
                        closed = true
                    }
                } else {
                    if byte == UInt8(ascii: "\n") { line += 1 }
                    field.append(byte)
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\"") where quoted && field.isEmpty && !closed:
                inQuotes = true
            case UInt8(ascii: ",") where quoted:
                fields.append(try Self.text(field, source: source, line: start))
                field.removeAll(keepingCapacity: true)
                closed = false
            case UInt8(ascii: "\n"):
                line += 1
                if field.last == UInt8(ascii: "\r") { field.removeLast() }
                fields.append(try Self.text(field, source: source, line: start))
                return Record(fields: fields, line: start)
            case UInt8(ascii: "\r") where closed:
                field.append(byte)  // CRLF after a quoted cell: the CR is taken off at the LF
            default:
                guard !closed else {
                    throw ReceiptError(.invalidArgument, "\(source):\(start): text after a quoted cell's closing quote")
                }
                field.append(byte)
            }
        }
        guard !inQuotes else { throw ReceiptError(.invalidArgument, "\(source):\(start): a quoted cell is never closed") }
        if field.last == UInt8(ascii: "\r") { field.removeLast() }
        fields.append(try Self.text(field, source: source, line: start))
        return Record(fields: fields, line: start)
    }

    private static func text(_ bytes: [UInt8], source: String, line: Int) throws(ReceiptError) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ReceiptError(.invalidArgument, "\(source):\(line): not UTF-8")
        }
        return text
    }
}

private extension String {
    var trimmingSpaces: String {
        var view = Substring(self)
        while let first = view.first, first == " " || first == "\t" { view.removeFirst() }
        while let last = view.last, last == " " || last == "\t" { view.removeLast() }
        return String(view)
    }
}
