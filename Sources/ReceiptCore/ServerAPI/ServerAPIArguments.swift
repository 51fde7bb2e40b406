/// A call's arguments as every front end gives them: one JSON object of Apple's
/// member names (C, Python and the command line all pass text).
public enum ServerAPIArguments {
    static let limits = JSONLimits(maxDepth: 8, maxValues: 10_000)

    public static func parse(_ bytes: [UInt8]) throws(ReceiptError) -> [String: JSONValue] {
        guard !bytes.isEmpty else { return [:] }
        guard bytes.count <= ServerAPIAnswer.maxBodyBytes else {
            throw ReceiptError(.inputTooLarge, "the arguments hold \(bytes.count) bytes; at most \(ServerAPIAnswer.maxBodyBytes)")
        }
        let value = try bytes.withUnsafeBufferPointer { (buffer) throws(ReceiptError) in try JSONValue.parse(buffer, limits: limits) }
        guard case .object(let members) = value else {
            throw ReceiptError(.notAnObject, "the arguments are \(value.kindName), not a JSON object")
        }
        return members
    }
}

extension ServerAPIArguments {
    /// Standard base64, as the `image` argument of upload_image takes a PNG file.
    public static func base64(_ bytes: [UInt8]) -> String { Base64.encode(bytes) }
}
