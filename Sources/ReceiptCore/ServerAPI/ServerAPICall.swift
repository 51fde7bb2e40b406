/// One call of the App Store Server API: its method, its path, and every argument
/// it takes (in the path, the query or the JSON body), each with its kind. A call's
/// arguments come as one JSON object named with Apple's member names
/// (`transactionId`, `startDate`, `productType`…), whatever the front end.
///
/// Adding a call is one entry in `ServerAPICall.all` (ServerAPICalls.swift).
public struct ServerAPICall: Sendable {
    enum Place: Sendable { case path, query, body }

    /// How a call's answers continue on another page.
    public enum Paging: Sendable {
        case none
        /// `revision` and `hasMore` in the answer; the next request sends `revision`.
        case revision
        /// `paginationToken` and `hasMore` in the answer; the next request sends `paginationToken`.
        case paginationToken
    }

    enum Body: Sendable {
        case none
        /// The body members as a JSON object.
        case json
        /// The `image` argument, base64 of a PNG, sent as its bytes (`image/png`).
        case png
    }

    struct Parameter: Sendable {
        let member: ServerAPIMember
        let place: Place
        /// Sent when the caller gives none.
        let defaultValue: JSONValue?
    }

    /// Apple's method name in its server libraries (Python spelling), e.g. `get_transaction_history`.
    public let name: String
    public let method: String
    /// The path with `{argument}` where a path argument goes.
    public let pathTemplate: String
    let parameters: [Parameter]
    public let paging: Paging
    let body: Body
    /// Checks across arguments (a start before an end, one filter of two).
    let crossCheck: ServerAPICrossCheck

    init(_ name: String, _ method: String, _ pathTemplate: String, paging: Paging = .none, body: Body = .none,
         _ parameters: [Parameter] = [], crossCheck: ServerAPICrossCheck = .none) {
        self.name = name
        self.method = method
        self.pathTemplate = pathTemplate
        self.paging = paging
        self.body = body
        self.parameters = parameters
        self.crossCheck = crossCheck
    }

    /// Whether the call names a transaction in its path (transactionId or
    /// originalTransactionId): a call that production may not know because the
    /// purchase was made in the sandbox (ServerAPIExchange.fallBack(to:)).
    public var asksByTransactionID: Bool {
        parameters.contains { $0.place == .path && $0.member.kind.shape == .transactionID }
    }

    /// Every argument name this call takes, in the order Apple documents them.
    public var argumentNames: [String] { parameters.map(\.member.name) }

    /// The call named `name`, or an error listing the known ones.
    public static func named(_ name: String) throws(ReceiptError) -> ServerAPICall {
        guard let call = all.first(where: { $0.name == name }) else {
            throw ReceiptError(.invalidArgument, "no App Store Server API call is named \(quoted(name)); known: "
                               + all.map(\.name).joined(separator: ", "))
        }
        return call
    }

    /// The arguments, normalized and checked: unknown, missing or malformed ones refused.
    func normalize(_ arguments: [String: JSONValue]) throws(ReceiptError) -> [String: JSONValue] {
        var given = arguments
        for parameter in parameters where given[parameter.member.name] == nil || given[parameter.member.name] == .null {
            if let fallback = parameter.defaultValue { given[parameter.member.name] = fallback }
        }
        let normalized: [String: JSONValue]
        do throws(ReceiptError) {
            normalized = try ServerAPIMember.normalize(given, members: parameters.map(\.member), within: "")
        } catch {
            throw Self.namingApplesError(error)
        }
        try crossCheck.check(normalized)
        return normalized
    }

    /// `error` ending with the error Apple's server answers its argument with, when
    /// Apple names one (ServerAPIErrorCode.forArgument): "transactionId must be 1 to 20
    /// digits (a transaction id); got text \"12x\" (INVALID_TRANSACTION_ID)".
    private static func namingApplesError(_ error: ReceiptError) -> ReceiptError {
        // The argument is the detail's first word ("productType[1]" and "productType:" are the
        // argument's own errors); a member inside a body object ("image.altText") has errors of its own.
        let word = error.detail.prefix { $0 != " " }
        let argument = String(word.prefix { $0 != "[" && $0 != ":" })
        guard error.status == .invalidArgument, !word.contains("."),
              let name = ServerAPIErrorCode.forArgument[argument] else { return error }
        return ReceiptError(.invalidArgument, error.detail + " (\(name))")
    }

    func arguments(in place: Place) -> [ServerAPIMember] {
        parameters.filter { $0.place == place }.map(\.member)
    }
}

/// Shorthands for the table: `path("transactionId", .transactionID)` and so on.
extension ServerAPICall.Parameter {
    static func path(_ name: String, _ kind: ServerAPIValueKind, default defaultValue: JSONValue? = nil) -> Self {
        Self(member: ServerAPIMember(name, kind, required: true), place: .path, defaultValue: defaultValue)
    }

    static func query(_ name: String, _ kind: ServerAPIValueKind) -> Self {
        Self(member: ServerAPIMember(name, kind), place: .query, defaultValue: nil)
    }

    static func body(_ name: String, _ kind: ServerAPIValueKind, required: Bool = false) -> Self {
        Self(member: ServerAPIMember(name, kind, required: required), place: .body, defaultValue: nil)
    }
}
