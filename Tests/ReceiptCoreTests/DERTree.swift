/// A DER element as a tree, for tests that take a real receipt apart and put it
/// back together changed: one envelope field at a time, so that each test shows
/// that exactly that change is refused.
indirect enum DERNode: Equatable {
    case primitive(UInt8, [UInt8])
    case constructed(UInt8, [DERNode])

    /// Definite-length DER only (what Apple writes); primitives are not entered.
    static func parse(_ bytes: [UInt8]) -> DERNode {
        var position = 0
        return read(bytes, &position)
    }

    private static func read(_ bytes: [UInt8], _ position: inout Int) -> DERNode {
        let tag = bytes[position]
        var length = Int(bytes[position + 1])
        position += 2
        if length >= 0x80 {
            let octets = length & 0x7F
            length = bytes[position..<position + octets].reduce(0) { $0 << 8 | Int($1) }
            position += octets
        }
        let end = position + length
        guard tag & 0x20 != 0 else {
            defer { position = end }
            return .primitive(tag, Array(bytes[position..<end]))
        }
        var children: [DERNode] = []
        while position < end { children.append(read(bytes, &position)) }
        return .constructed(tag, children)
    }

    var encoded: [UInt8] {
        switch self {
        case .primitive(let tag, let content): DER.tlv(tag, content)
        case .constructed(let tag, let children): DER.tlv(tag, children.flatMap(\.encoded))
        }
    }

    var children: [DERNode] {
        get {
            if case .constructed(_, let children) = self { return children }
            return []
        }
        set {
            if case .constructed(let tag, _) = self { self = .constructed(tag, newValue) }
        }
    }
}

/// The parts of a receipt's SignedData, by position (RFC 2315).
struct SignedDataParts {
    var tree: DERNode

    init(_ bytes: [UInt8]) { tree = DERNode.parse(bytes) }

    /// ContentInfo → [0] → SignedData's fields.
    var fields: [DERNode] {
        get { tree.children[1].children[0].children }
        set { tree.children[1].children[0].children = newValue }
    }

    var certificates: [DERNode] {
        get { fields[3].children }
        set { fields[3].children = newValue }
    }

    /// The one SignerInfo's fields.
    var signer: [DERNode] {
        get { fields[fields.count - 1].children[0].children }
        set { fields[fields.count - 1].children[0].children = newValue }
    }

    var bytes: [UInt8] { tree.encoded }
}
