/// One HTTP request to the App Store Server API, built whole by the core: the
/// transport sends `method` to `url` with `headers` and `body`, and adds nothing.
public struct ServerAPIRequest: Sendable, Equatable {
    public let method: String
    public let url: String
    /// Authorization (the bearer token), Accept, User-Agent, and Content-Type when there is a body.
    public let headers: [Header]
    public let body: [UInt8]

    public struct Header: Sendable, Equatable {
        public let name: String
        public let value: String
    }

    public static let userAgent = "libreceipt/\(ReceiptVersion.string)"

    /// The request for `call` with `arguments` already normalized by the call.
    static func build(_ call: ServerAPICall, arguments: [String: JSONValue], baseURL: String,
                      token: String) throws(ReceiptError) -> ServerAPIRequest {
        var url = baseURL
        for segment in call.pathTemplate.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
            url += "/"
            if segment.first == "{", segment.last == "}", let value = arguments[String(segment.dropFirst().dropLast())] {
                url += PercentEncoding.encoded(ServerAPIValueKind.queryText(value))
            } else {
                url += segment
            }
        }
        var separator = "?"
        for member in call.arguments(in: .query) {
            guard let value = arguments[member.name] else { continue }
            for item in value.arrayValue ?? [value] {
                url += separator + member.name + "=" + PercentEncoding.encoded(ServerAPIValueKind.queryText(item))
                separator = "&"
            }
        }
        var headers = [Header(name: "Authorization", value: "Bearer " + token),
                       Header(name: "Accept", value: "application/json"),
                       Header(name: "User-Agent", value: userAgent)]
        var body: [UInt8] = []
        switch call.body {
        case .none:
            break
        case .json:
            var writer = JSONWriter()
            writer.value(nil, .object(arguments.filter { name, _ in call.arguments(in: .body).contains { $0.name == name } }))
            body = writer.bytes
            headers.append(Header(name: "Content-Type", value: "application/json"))
        case .png:
            body = try Base64.decode(Array((arguments["image"]?.stringValue ?? "").utf8))
            headers.append(Header(name: "Content-Type", value: "image/png"))
        }
        return ServerAPIRequest(method: call.method, url: url, headers: headers, body: body)
    }
}
