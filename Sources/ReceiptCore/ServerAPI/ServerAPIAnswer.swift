/// What one HTTP answer of the App Store Server API says: a success whose every
/// signed member verified, or Apple's error. Never half-verified data: one member
/// that fails makes the whole answer an error naming that member.
public enum ServerAPIAnswer: Sendable {
    case success(ServerAPISuccess)
    case failure(ServerAPIFailure)

    /// The most an answer may hold: a page of Apple's is some tens of KB.
    public static let maxBodyBytes = 4 << 20
    static let jsonLimits = JSONLimits(maxDepth: 16, maxValues: 200_000)

    /// Reads `body` (the answer to `call`, asked with `arguments`) with its HTTP
    /// status and `Retry-After` header, through Apple's model of the answer
    /// (ServerAPIAnswerReader). Throws when a success cannot be read or trusted;
    /// the error's detail names the member.
    static func read(_ call: ServerAPICall, arguments: [String: JSONValue], httpStatus: Int, retryAfter: String?,
                     body: [UInt8], verifier: ReceiptVerifier, nowSeconds: Int64) throws(ReceiptError) -> ServerAPIAnswer {
        guard body.count <= maxBodyBytes else {
            throw ReceiptError(.inputTooLarge, "the answer holds \(body.count) bytes; at most \(maxBodyBytes) are read")
        }
        guard (200..<300).contains(httpStatus) else {
            return .failure(ServerAPIFailure(httpStatus: httpStatus, body: body,
                                             retryAfterMilliseconds: RetryAfter.milliseconds(retryAfter, nowSeconds: nowSeconds)))
        }
        let document: JSONValue
        if body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            document = .object([:])  // finish_transaction, set_app_account_token…: 200 with no body
        } else {
            do throws(ReceiptError) {
                document = try body.withUnsafeBufferPointer { (buffer) throws(ReceiptError) in try JSONValue.parse(buffer, limits: jsonLimits) }
            } catch {
                throw ReceiptError(error.status, at: error.offset, "the answer to \(call.name) is not JSON: \(error.detail)")
            }
        }
        guard case .object = document else {
            throw ReceiptError(.notAnObject, "the answer to \(call.name) is \(document.kindName), not an object")
        }
        let verified = try ServerAPIAnswerReader(verifier: verifier, arguments: arguments)
            .read(document, as: call.answerModel, path: "")
        return .success(ServerAPISuccess(call: call, document: verified))
    }
}

/// A 2xx answer with every signed member verified and decoded beside it.
public struct ServerAPISuccess: Sendable {
    /// The members of Apple's model as sent (others dropped), plus each verified
    /// payload beside its signed member (see ServerAPIAnswerReader).
    public let document: JSONValue
    /// Whether Apple has another page (`hasMore`).
    public let hasMore: Bool
    /// The argument and value that ask for the next page, when `hasMore`.
    public let nextPage: (name: String, value: JSONValue)?

    init(call: ServerAPICall, document: JSONValue) {
        self.document = document
        let hasMore = document["hasMore"]?.boolValue ?? false
        self.hasMore = hasMore
        let cursorName: String? = switch call.paging {
        case .none: nil
        case .revision: "revision"
        case .paginationToken: "paginationToken"
        }
        nextPage = cursorName.flatMap { name in
            guard hasMore, let value = document[name]?.stringValue, !value.isEmpty else { return nil }
            return (name, .string(value))
        }
    }

    /// The same answer marked with the environment that gave it (`answered_by`), after a
    /// production→sandbox fallback. Apple's models have no such member, so none came on the wire.
    func answeredBy(_ environment: ReceiptEnvironment) -> ServerAPISuccess {
        guard case .object(var members) = document else { return self }
        members["answered_by"] = .string(environment.rawValue)
        return ServerAPISuccess(document: .object(members), hasMore: hasMore, nextPage: nextPage)
    }

    private init(document: JSONValue, hasMore: Bool, nextPage: (name: String, value: JSONValue)?) {
        self.document = document
        self.hasMore = hasMore
        self.nextPage = nextPage
    }

    /// The document as compact JSON (members in name order).
    public var json: String {
        var writer = JSONWriter()
        writer.value(nil, document)
        return writer.string
    }
}

/// Apple's answer to a request it did not serve: the HTTP status, Apple's
/// `errorCode` and `errorMessage` when the body has them, and `Retry-After`.
public struct ServerAPIFailure: Sendable, Equatable {
    public let httpStatus: Int
    public let errorCode: Int64?
    public let errorMessage: String?
    public let retryAfterMilliseconds: Int64?

    init(httpStatus: Int, errorCode: Int64?, errorMessage: String?, retryAfterMilliseconds: Int64?) {
        self.httpStatus = httpStatus
        self.errorCode = errorCode
        self.errorMessage = errorMessage
        self.retryAfterMilliseconds = retryAfterMilliseconds
    }

    init(httpStatus: Int, body: [UInt8], retryAfterMilliseconds: Int64?) {
        // Best effort: an error body that is not Apple's JSON still gives its status.
        let document = body.count <= 65_536 ? try? JSONValue.parse(String(decoding: body, as: UTF8.self), maxDepth: 8) : nil
        self.init(httpStatus: httpStatus, errorCode: document?["errorCode"]?.int64Value,
                  errorMessage: document?["errorMessage"]?.stringValue, retryAfterMilliseconds: retryAfterMilliseconds)
    }

    /// Apple's name for the error code, when it is one Apple's library names.
    public var errorName: String? { errorCode.flatMap(ServerAPIErrorCode.name) }

    /// Apple does not know the transaction the call named (TRANSACTION_ID_NOT_FOUND,
    /// ORIGINAL_TRANSACTION_ID_NOT_FOUND): an answer about that id, not about the caller.
    public var saysTransactionUnknown: Bool { errorCode.map(ServerAPIExchange.transactionNotFound.contains) == true }

    /// Apple calls the id the call named malformed (INVALID_TRANSACTION_ID, INVALID_ORIGINAL_TRANSACTION_ID).
    public var saysTransactionIDInvalid: Bool { errorCode == 4000006 || errorCode == 4000008 }

    /// Whether sending the same request later may succeed: 429, 5xx, and the codes Apple calls retryable.
    public var isRetryable: Bool {
        httpStatus == 429 || httpStatus >= 500 || errorCode.map(ServerAPIErrorCode.retryable.contains) == true
    }

    /// One line for logs and exceptions.
    public var summary: String {
        // Status 0 is no answer at all: the message says why, with no HTTP status to show.
        guard httpStatus != 0 else { return errorMessage ?? "no answer" }
        var text = "HTTP \(httpStatus)"
        if let errorCode { text += ", error \(errorCode)" + (errorName.map { " \($0)" } ?? "") }
        if let errorMessage { text += ": \(errorMessage)" }
        if httpStatus == 401 { text += " (the token was refused: check the key id, issuer id, bundle id and key)" }
        if let retryAfterMilliseconds { text += "; retry after \(retryAfterMilliseconds) ms" }
        return text
    }
}
