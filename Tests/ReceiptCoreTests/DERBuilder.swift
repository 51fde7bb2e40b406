import ReceiptCore

/// Builds DER for tests: payloads and an unsigned PKCS #7 wrapper around them.
/// Parsing never checks signatures, so these reach every parser path.
enum DER {
    static func length(_ count: Int) -> [UInt8] {
        if count < 0x80 { return [UInt8(count)] }
        var body = [UInt8]()
        var rest = count
        while rest > 0 { body.insert(UInt8(rest & 0xFF), at: 0); rest >>= 8 }
        return [0x80 | UInt8(body.count)] + body
    }

    static func tlv(_ tag: UInt8, _ body: [UInt8]) -> [UInt8] { [tag] + length(body.count) + body }

    static func integer(_ value: Int64) -> [UInt8] {
        var bytes = withUnsafeBytes(of: value.bigEndian, Array.init)
        while bytes.count > 1 && ((bytes[0] == 0 && bytes[1] < 0x80) || (bytes[0] == 0xFF && bytes[1] >= 0x80)) {
            bytes.removeFirst()
        }
        return tlv(0x02, bytes)
    }

    static func utf8(_ text: String) -> [UInt8] { tlv(0x0C, Array(text.utf8)) }
    static func ia5(_ text: String) -> [UInt8] { tlv(0x16, Array(text.utf8)) }
    static func set(_ members: [[UInt8]]) -> [UInt8] { tlv(0x31, members.flatMap { $0 }) }

    static func attribute(_ type: Int64, _ value: [UInt8], version: Int64 = 1) -> [UInt8] {
        tlv(0x30, integer(type) + integer(version) + tlv(0x04, value))
    }

    static let signedDataOID: [UInt8] = tlv(0x06, [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02])
    static let dataOID: [UInt8] = tlv(0x06, [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01])

    /// ContentInfo { signedData, [0] SignedData { 1, {}, { data, [0] payload }, [0] {}, {} } }.
    static func receipt(payload: [UInt8], outerOID: [UInt8] = signedDataOID) -> [UInt8] {
        let content = tlv(0x30, dataOID + tlv(0xA0, tlv(0x04, payload)))
        let signedData = tlv(0x30, integer(1) + set([]) + content + tlv(0xA0, []) + set([]))
        return tlv(0x30, outerOID + tlv(0xA0, signedData))
    }

    static let validAppAttributes: [[UInt8]] = [
        attribute(0, utf8("Production")),
        attribute(2, utf8("com.example.app")),
        attribute(3, utf8("1.0")),
        attribute(12, ia5("2024-01-02T03:04:05Z")),
    ]

    static func receipt(attributes: [[UInt8]]) -> [UInt8] { receipt(payload: set(attributes)) }
}

func parseStatus(_ bytes: [UInt8]) -> ReceiptStatus? {
    do {
        _ = try Receipt.parse(bytes)
        return nil
    } catch {
        return error.status
    }
}
