/// A local stand-in for one of the App Store's verifyReceipt endpoints: Apple's
/// request body in, Apple's answer out (docs/FORMAT.md §5), for servers that still POST
/// receipts there. Everything `receipt serve` answers on `/verifyReceipt` and
/// `/sandbox/verifyReceipt` is decided here; the HTTP server only carries bytes.
///
/// Immutable, and safe to share across threads: one per endpoint, for the whole
/// life of a server.
public struct VerifyReceiptEndpoint: Sendable {
    /// The endpoint this one plays: .production answers 21007 for a sandbox
    /// receipt, .sandbox 21008 for a production one.
    public let environment: AppStoreEnvironment
    public let verifier: ReceiptVerifier
    /// The app's shared secrets. Empty: `password` is never asked for. Otherwise a
    /// receipt with auto-renewable purchases needs one of them, or gets 21004.
    public let sharedSecrets: [String]

    /// The request object is Apple's: three members (depth 1). Anything deeper or
    /// longer is not a verifyReceipt request, and costs no more than this to refuse.
    static let requestLimits = JSONLimits(maxDepth: 2, maxValues: 64)

    public init(environment: AppStoreEnvironment, verifier: ReceiptVerifier, sharedSecrets: [String] = []) {
        self.environment = environment
        self.verifier = verifier
        self.sharedSecrets = sharedSecrets
    }

    /// A request read and judged, before it is answered: either its answer already (a
    /// body that is not Apple's request object, or whose `receipt-data` is not a
    /// readable receipt: 21002, the reason in `unreadable`), or the receipt and the App
    /// Store's checks of it (environment, signature, shared secret). A server with a
    /// store looks up `subscriptionIDs` before `answer(_:known:)`.
    public struct PreparedRequest: Sendable {
        fileprivate let refused: LocalVerifyReceipt.Answer?
        fileprivate let receipt: Receipt?
        fileprivate let options: LocalVerifyReceipt.Options
        fileprivate let judgment: LocalVerifyReceipt.Judgment?

        /// The original transaction ids of the receipt's auto-renewable subscriptions,
        /// at most `maxSubscriptionIDs`; empty unless the receipt passed every check
        /// (a store is never asked about a receipt that will be refused).
        public var subscriptionIDs: [String] {
            guard let receipt, let judgment, judgment.refused == nil else { return [] }
            return Array(LocalVerifyReceipt.subscriptionIDs(of: receipt).prefix(VerifyReceiptEndpoint.maxSubscriptionIDs))
        }
    }

    /// The most subscriptions of one receipt a server looks up (a genuine receipt holds
    /// a few; the look-up's cost stays bounded whatever a receipt holds).
    public static let maxSubscriptionIDs = 256

    /// Reads a POST's body and judges the receipt in it, made at `requestDateMilliseconds`
    /// (written as `receipt.request_date*`; by default now, the core's wall clock).
    public func prepare(body: [UInt8], requestDateMilliseconds: Int64? = nil) -> PreparedRequest {
        let request: IncomingVerifyReceiptRequest
        let receipt: Receipt
        do throws(ReceiptError) {
            request = try IncomingVerifyReceiptRequest(body: body)
            receipt = try Receipt.parse(request.receiptData)
        } catch {
            return PreparedRequest(refused: LocalVerifyReceipt.statusOnly(LocalVerifyReceipt.malformed, unreadable: error),
                                   receipt: nil, options: LocalVerifyReceipt.Options(), judgment: nil)
        }
        let options = LocalVerifyReceipt.Options(password: request.password,
                                                 excludeOldTransactions: request.excludeOldTransactions,
                                                 requestDateMilliseconds: requestDateMilliseconds ?? ReceiptClock.systemNow(),
                                                 sharedSecrets: sharedSecrets)
        return PreparedRequest(refused: nil, receipt: receipt, options: options,
                               judgment: LocalVerifyReceipt.judge(receipt, verifier: verifier, expecting: environment, options: options))
    }

    /// The answer to a prepared request, merged with what a store knows of its subscriptions.
    public func answer(_ prepared: PreparedRequest, known: KnownSubscriptions? = nil) -> LocalVerifyReceipt.Answer {
        guard let receipt = prepared.receipt, let judgment = prepared.judgment else {
            return prepared.refused ?? LocalVerifyReceipt.statusOnly(LocalVerifyReceipt.malformed)
        }
        var options = prepared.options
        options.known = known
        return LocalVerifyReceipt.answer(for: receipt, judged: judgment, expecting: environment, options: options)
    }

    /// The answer to a POST with `body`, made at `requestDateMilliseconds`, from the receipt alone.
    public func answer(toBody body: [UInt8], requestDateMilliseconds: Int64) -> LocalVerifyReceipt.Answer {
        answer(prepare(body: body, requestDateMilliseconds: requestDateMilliseconds))
    }

    /// The same, for a request made now (the core's wall clock, as verification uses).
    public func answer(toBody body: [UInt8]) -> LocalVerifyReceipt.Answer {
        answer(prepare(body: body))
    }

    /// The answer when the store that keeps what came after the receipt cannot be read:
    /// 21005, which Apple's clients retry.
    public static let storeUnavailableAnswer = LocalVerifyReceipt.statusOnly(LocalVerifyReceipt.serverUnavailable)

    /// The answer to any method but POST, as Apple's: `{"status":21000}`.
    public static let notPostAnswer = LocalVerifyReceipt.statusOnly(LocalVerifyReceipt.notPost)

    /// The answer to a body past the server's size limit: 21002, as any unreadable request.
    public static func tooLargeAnswer(limit: Int) -> LocalVerifyReceipt.Answer {
        LocalVerifyReceipt.statusOnly(LocalVerifyReceipt.malformed,
                                      unreadable: ReceiptError(.inputTooLarge, "the request body is over \(limit) bytes"))
    }
}

/// Apple's verifyReceipt request body: `{"receipt-data": base64, "password": text,
/// "exclude-old-transactions": bool}`. Members Apple does not define are ignored,
/// as Apple ignores them.
struct IncomingVerifyReceiptRequest: Sendable {
    let receiptData: [UInt8]
    let password: String?
    let excludeOldTransactions: Bool

    init(body: [UInt8]) throws(ReceiptError) {
        let document = try body.withUnsafeBufferPointer { (bytes) throws(ReceiptError) in
            try JSONValue.parse(bytes, limits: VerifyReceiptEndpoint.requestLimits)
        }
        guard case .object = document else {
            throw ReceiptError(.notAnObject, "the request body is JSON but not an object")
        }
        guard let receipt = document["receipt-data"] else {
            throw ReceiptError(.badField, "the request has no \"receipt-data\"")
        }
        guard let text = receipt.stringValue else {
            throw ReceiptError(.badField, "\"receipt-data\" is \(receipt.kindName), not a base64 string")
        }
        receiptData = Array(text.utf8)
        switch document["password"] {
        case nil, .null?: password = nil
        case .string(let secret)?: password = secret
        case let other?: throw ReceiptError(.badField, "\"password\" is \(other.kindName), not a string")
        }
        switch document["exclude-old-transactions"] {
        case nil, .null?: excludeOldTransactions = false
        case .bool(let flag)?: excludeOldTransactions = flag
        case let other?: throw ReceiptError(.badField, "\"exclude-old-transactions\" is \(other.kindName), not a boolean")
        }
    }
}
