#if canImport(Glibc)
import Glibc
#endif
import ReceiptCore
import Yams

/// `receipt serve --config FILE`: the file's keys (ServeConfigShape) read into the flags that
/// make the same settings, each remembered with its line, so that an error of the file (an
/// unknown key, a wrong type, a missing file) and an error of a setting it made (a rule of
/// ServerSettings, naming its flag) both name `FILE:LINE` and the key.
struct ServeConfigFile {
    /// The largest file read: a configuration is a few kilobytes.
    static let maxBytes = 1 << 20

    let path: String
    /// The flags and values the file makes, in the file's order.
    private(set) var arguments: [String] = []
    /// Where each flag was set: its line and key (the first, for a repeated flag).
    private(set) var origins: [(flag: String, line: Int, key: String)] = []

    /// Reads and checks `path`; throws a ReceiptError naming `FILE:LINE` and the key.
    init(path: String) throws(ReceiptError) {
        self.path = path
        let text = try optionFile("--config", path) { bytes throws(ReceiptError) -> String in
            guard bytes.count <= Self.maxBytes else {
                throw ReceiptError(.invalidArgument, "--config \(path): larger than \(Self.maxBytes) bytes")
            }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw ReceiptError(.invalidArgument, "--config \(path): not UTF-8 text")
            }
            return text
        }
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw Self.refusal(error, in: path)
        } catch {
            throw ReceiptError(.invalidArgument, "\(path): not YAML: \(error)")
        }
        guard let root else { throw ReceiptError(.invalidArgument, "\(path): empty; docs/serve.md lists its keys") }
        try read(root, as: ServeConfigShape.file, key: "")
    }

    /// libyaml's refusal (or Yams's: a key given twice), naming the file and the line.
    private static func refusal(_ error: YamlError, in path: String) -> ReceiptError {
        switch error {
        case .duplicatedKeysInMapping(let keys, let context):
            return ReceiptError(.invalidArgument, "\(path):\(context.mark.line): \(keys.map { "'\($0)'" }.joined(separator: ", ")) given twice")
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _), .composer(_, let problem, let mark, _):
            return ReceiptError(.invalidArgument, "\(path):\(mark.line): not YAML: \(problem)")
        default:
            return ReceiptError(.invalidArgument, "\(path): not YAML: \(error)")
        }
    }

    /// The folder relative paths in the file are taken from.
    private var folder: String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private func failure(_ node: Node, _ key: String, _ message: String) -> ReceiptError {
        ReceiptError(.invalidArgument, "\(path):\(node.mark?.line ?? 0): \(key.isEmpty ? "the file" : key): \(message)")
    }

    private mutating func read(_ node: Node, as shape: ServeConfigShape, key: String) throws(ReceiptError) {
        switch shape {
        case .mapping(let keys, let required):
            guard case .mapping(let mapping) = node else { throw failure(node, key, "must be a mapping of keys") }
            var seen: Set<String> = []
            for (name, value) in mapping {
                guard case .scalar(let scalar) = name, let shape = keys[scalar.string] else {
                    throw failure(name, key, "unknown key \(name.string.map { "'\($0)'" } ?? "")"
                                  + "; it takes \(keys.keys.sorted().joined(separator: ", "))")
                }
                guard seen.insert(scalar.string).inserted else { throw failure(name, joined(key, scalar.string), "given twice") }
                try read(value, as: shape, key: joined(key, scalar.string))
            }
            if let missing = required.subtracting(seen).sorted().first {
                throw failure(node, key, "needs the key \(missing)")
            }
        case .list(let item, let most):
            guard case .sequence(let sequence) = node else { throw failure(node, key, "must be a list") }
            guard sequence.count <= most else {
                throw failure(node, key, most == ServeConfigShape.maxApps
                              ? "holds \(sequence.count) apps; a server holds \(most) for now (docs/serve.md)"
                              : "holds \(sequence.count) items, more than \(most)")
            }
            for (index, element) in sequence.enumerated() { try read(element, as: item, key: "\(key)[\(index)]") }
        case .value(let value, let flag):
            if value.many {
                guard case .sequence(let sequence) = node else { throw failure(node, key, "must be a list") }
                for element in sequence { try give(element, value.kind, to: flag, key: key) }
            } else {
                try give(node, value.kind, to: flag, key: key)
            }
        }
    }

    private func joined(_ key: String, _ name: String) -> String { key.isEmpty ? name : key + "." + name }

    /// The flag and value one scalar makes.
    private mutating func give(_ node: Node, _ kind: ServeConfigShape.Kind, to flag: String, key: String) throws(ReceiptError) {
        guard case .scalar(let scalar) = node else { throw failure(node, key, "must be a single value") }
        let text = scalar.string
        var given: [String]
        switch kind {
        case .text:
            guard !text.isEmpty, scalar.style != .plain || (text != "null" && text != "~") else {
                throw failure(node, key, "must not be empty")
            }
            given = [flag, text]
        case .integer:
            guard scalar.style == .plain, Int64(text) != nil else { throw failure(node, key, "must be a whole number, not '\(text)'") }
            given = [flag, text]
        case .boolean(let inverted):
            guard scalar.style == .plain, text == "true" || text == "false" else {
                throw failure(node, key, "must be true or false, not '\(text)'")
            }
            given = (text == "true") != inverted ? [flag] : []
        case .file:
            guard !text.isEmpty else { throw failure(node, key, "must name a file") }
            let file = text.hasPrefix("/") ? text : folder + "/" + text
            guard access(file, R_OK) == 0 else {
                throw failure(node, key, "cannot read \(file): \(String(cString: strerror(errno)))")
            }
            given = [flag, file]
        case .location:
            guard !text.isEmpty else { throw failure(node, key, "must name a file or a postgres:// URL") }
            given = [flag, text.hasPrefix("/") || text.contains("://") ? text : folder + "/" + text]
        }
        if !given.isEmpty, !origins.contains(where: { $0.flag == flag }) {
            origins.append((flag, node.mark?.line ?? 0, key))
        }
        arguments += given
    }

    /// `message` (an error of a setting the file made, naming its flags) with the file, line and
    /// key of the first flag it names in front, and each flag it names as the file's key.
    func located(_ message: String) -> String {
        let named = origins.filter { origin in !ranges(of: origin.flag, in: message).isEmpty }.max { $0.flag.count < $1.flag.count }
        var keyed = message
        for (flag, key) in ServeConfigShape.keysByFlag.sorted(by: { $0.key.count > $1.key.count }) {
            for range in ranges(of: flag, in: keyed).reversed() { keyed.replaceSubrange(range, with: key) }
        }
        guard let named else { return "\(path): \(keyed)" }
        return "\(path):\(named.line): \(named.key): \(keyed)"
    }

    /// Where `message` names `flag` as a whole word (not a longer flag that begins with it).
    private func ranges(of flag: String, in message: String) -> [Range<String.Index>] {
        message.ranges(of: flag).filter { range in
            guard let after = message[range.upperBound...].first else { return true }
            return !(after.isLetter || after == "-")
        }
    }
}
