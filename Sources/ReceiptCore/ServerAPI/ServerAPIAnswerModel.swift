/// Apple's model of an App Store Server API answer (HistoryResponse,
/// StatusResponse, …): which members it has, each member's JSON type, which of
/// them are JWS and of which kind, and which the answer cannot be without.
///
/// An answer is read through its model, never walked as it came: a member the
/// model does not name is dropped (it is neither signed nor Apple's), a member
/// of the wrong JSON type refuses the whole answer naming it (`hasMore: 1`,
/// `appAppleId: "hi"`), and a required signed member that is absent or null
/// refuses it too. The decoded payloads that the reader adds beside each signed
/// member (`transactions`, `renewal_info`…) come only out of JWS that verified;
/// an answer that already carries such a name is refused, since those names are
/// never Apple's.
///
/// A struct of plain fields rather than an indirect enum, for the reason
/// ServerAPIValueKind gives (LeakSanitizer and the process-long table).
struct ServerAPIAnswerShape: Sendable {
    enum Kind: Sendable { case string, integer, bool, signed, list, object, map }

    /// Boxed so that a shape can hold a shape.
    final class Element: Sendable {
        let shape: ServerAPIAnswerShape
        init(_ shape: ServerAPIAnswerShape) { self.shape = shape }
    }

    let kind: Kind
    /// signed: the kind of payload the JWS must carry.
    var payloadKind: SignedPayloadKind = .unknown
    /// signed: the argument of the call the payload's `transactionId` must equal.
    var sameTransactionAs: String?
    /// list, map: the shape of each item.
    var element: Element?
    /// object: its members.
    var members: [ServerAPIAnswerMember] = []

    static let string = Self(kind: .string)
    static let integer = Self(kind: .integer)
    static let bool = Self(kind: .bool)
    /// A compact JWS of `kind`, verified; its payload is added beside it.
    static func signed(_ kind: SignedPayloadKind, sameTransactionAs argument: String? = nil) -> Self {
        Self(kind: .signed, payloadKind: kind, sameTransactionAs: argument)
    }
    static func list(_ element: Self) -> Self { Self(kind: .list, element: Element(element)) }
    static func object(_ members: [ServerAPIAnswerMember]) -> Self { Self(kind: .object, members: members) }
    /// An object whose names are data (a count per failure reason), each value of `element`.
    static func map(_ element: Self) -> Self { Self(kind: .map, element: Element(element)) }
    /// An answer with no body, or one whose body Apple defines no member of.
    static let empty = Self.object([])

    /// Whether this shape, or the items of a list of it, is a JWS.
    var isSigned: Bool { kind == .signed || (kind == .list && element?.shape.kind == .signed) }
}

/// One member of an answer object.
struct ServerAPIAnswerMember: Sendable {
    let name: String
    let shape: ServerAPIAnswerShape
    /// Absent or null refuses the answer.
    let required: Bool

    init(_ name: String, _ shape: ServerAPIAnswerShape, required: Bool = false) {
        self.name = name
        self.shape = shape
        self.required = required
    }
}

/// Reads one answer through its model (see ServerAPIAnswerShape).
struct ServerAPIAnswerReader {
    let verifier: ReceiptVerifier
    /// The call's arguments, for the members that must name what was asked.
    let arguments: [String: JSONValue]

    /// Most items one list of an answer may hold; a page of Apple's holds at most some hundreds.
    static let maxListItems = 10_000

    func read(_ value: JSONValue, as shape: ServerAPIAnswerShape, path: String) throws(ReceiptError) -> JSONValue {
        switch shape.kind {
        case .string:
            guard case .string = value else { throw Self.wrongType(path, value, "a string") }
            return value
        case .integer:
            guard case .number(let text) = value, Int64(text) != nil else { throw Self.wrongType(path, value, "an integer") }
            return value
        case .bool:
            guard case .bool = value else { throw Self.wrongType(path, value, "a boolean") }
            return value
        case .signed:
            guard case .string = value else { throw Self.wrongType(path, value, "a JWS (a string)") }
            return value
        case .list:
            guard case .array(let items) = value else { throw Self.wrongType(path, value, "an array") }
            guard items.count <= Self.maxListItems else {
                throw ReceiptError(.limitExceeded, "\(path) holds \(items.count) items; at most \(Self.maxListItems) are read")
            }
            var out: [JSONValue] = []
            out.reserveCapacity(items.count)
            for (index, item) in items.enumerated() {
                out.append(try read(item, as: shape.element!.shape, path: "\(path)[\(index)]"))
            }
            return .array(out)
        case .map:
            guard case .object(let members) = value else { throw Self.wrongType(path, value, "an object") }
            var out: [String: JSONValue] = [:]
            for (name, member) in members { out[name] = try read(member, as: shape.element!.shape, path: "\(path).\(name)") }
            return .object(out)
        case .object:
            guard case .object(let members) = value else { throw Self.wrongType(path, value, "an object") }
            return try readObject(members, model: shape.members, path: path)
        }
    }

    private func readObject(_ members: [String: JSONValue], model: [ServerAPIAnswerMember],
                            path: String) throws(ReceiptError) -> JSONValue {
        var out: [String: JSONValue] = [:]
        for member in model {
            let memberPath = path.isEmpty ? member.name : "\(path).\(member.name)"
            let value = members[member.name]
            if value == nil || value == .null {
                guard !member.required else {
                    throw ReceiptError(.badField, "\(memberPath) is \(value == nil ? "absent" : "null"); Apple's answer always has it")
                }
                continue
            }
            out[member.name] = try read(value!, as: member.shape, path: memberPath)
            guard member.shape.isSigned, let decodedName = SignedMembers.decodedName(of: member.name) else { continue }
            guard members[decodedName] == nil else {
                throw ReceiptError(.unsignedMember, "\(path.isEmpty ? decodedName : "\(path).\(decodedName)"): "
                                   + "the answer carries a member by the name its verified payloads are given; it is not Apple's")
            }
            out[decodedName] = try payloads(of: value!, as: member.shape, path: memberPath)
        }
        return .object(out)
    }

    /// The verified payload of a signed member, or the payloads of a list of them.
    private func payloads(of value: JSONValue, as shape: ServerAPIAnswerShape, path: String) throws(ReceiptError) -> JSONValue {
        if shape.kind == .list, case .array(let items) = value {
            var out: [JSONValue] = []
            out.reserveCapacity(items.count)
            for (index, item) in items.enumerated() {
                out.append(try payload(of: item.stringValue!, as: shape.element!.shape, path: "\(path)[\(index)]"))
            }
            return .array(out)
        }
        return try payload(of: value.stringValue!, as: shape, path: path)
    }

    private func payload(of token: String, as shape: ServerAPIAnswerShape, path: String) throws(ReceiptError) -> JSONValue {
        let payload = try SignedMembers.verifiedPayload(of: token, kind: shape.payloadKind, verifier: verifier, path: path)
        if let argument = shape.sameTransactionAs, let asked = arguments[argument].map(ServerAPIValueKind.queryText) {
            let named = payload["transactionId"]?.stringValue
            guard named == asked else {
                throw ReceiptError(.notWhatWasAsked, "\(path) is transaction \(named.map(quoted) ?? "(none)"), "
                                   + "not \(quoted(asked)) that was asked for")
            }
        }
        return try SignedMembers.verify(payload, verifier: verifier, path: path, depth: 1)
    }

    static func wrongType(_ path: String, _ value: JSONValue, _ expected: String) -> ReceiptError {
        ReceiptError(.badField, "\(path.isEmpty ? "the answer" : path) is \(value.kindName), not \(expected) as in Apple's model")
    }
}
