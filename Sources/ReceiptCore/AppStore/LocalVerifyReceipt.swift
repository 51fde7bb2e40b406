/// The answer the App Store's verifyReceipt would give for a receipt, produced
/// locally: for servers moving off the deprecated endpoint that still consume its JSON.
///
/// `latest_receipt_info` and `latest_receipt` are written, as Apple's are, only for
/// receipts with auto-renewable subscriptions. What a receipt cannot tell, and so
/// is never written: renewals that happened
/// after the receipt was issued (the App Store would list them in
/// latest_receipt_info), `pending_renewal_info` (renewal intent lives only on
/// Apple's servers), and the entries' `subscription_group_identifier` and
/// `cancellation_reason`. `request_date*` is written when the caller gives the
/// request's time (VerifyReceiptEndpoint does).
public enum LocalVerifyReceipt {
    /// Statuses as the App Store returns them (docs/FORMAT.md §5).
    public static let notPost: Int64 = 21000
    public static let malformed: Int64 = 21002
    public static let notAuthenticated: Int64 = 21003
    public static let sharedSecretMismatch: Int64 = 21004
    public static let sandboxReceiptSentToProduction: Int64 = 21007
    public static let productionReceiptSentToSandbox: Int64 = 21008

    /// What a verifyReceipt request asks beyond the receipt itself.
    public struct Options: Sendable {
        /// The request's `password`.
        public var password: String?
        /// The request's `exclude-old-transactions`: latest_receipt_info keeps, of each
        /// auto-renewable subscription, only its latest renewal.
        public var excludeOldTransactions: Bool
        /// When set, `receipt.request_date*` is written with this instant.
        public var requestDateMilliseconds: Int64?
        /// The app's shared secrets; when not empty, a receipt with auto-renewable
        /// purchases needs `password` to be one of them, or gets 21004.
        public var sharedSecrets: [String]

        public init(password: String? = nil, excludeOldTransactions: Bool = false,
                    requestDateMilliseconds: Int64? = nil, sharedSecrets: [String] = []) {
            self.password = password
            self.excludeOldTransactions = excludeOldTransactions
            self.requestDateMilliseconds = requestDateMilliseconds
            self.sharedSecrets = sharedSecrets
        }
    }

    /// An answer: the JSON, its status, and why the input could not be read when it
    /// is 21002 (the App Store says no more; a local caller can say what is wrong).
    public struct Answer: Sendable {
        /// The JSON as UTF-8, as a server sends it.
        public let bytes: [UInt8]
        public let status: Int64
        public let unreadable: ReceiptError?
        /// The receipt's fingerprint (ContentFingerprint) when it could be read: Apple's
        /// JSON has no member for it, so `receipt serve` sends it as a header.
        public var fingerprint: [UInt8]? = nil

        public var json: String { String(decoding: bytes, as: UTF8.self) }
    }

    /// `expecting` is the environment the caller plays: .production answers 21007
    /// for a sandbox receipt, as Apple's production endpoint does, and the reverse.
    public static func response(for input: [UInt8], verifier: ReceiptVerifier, expecting environment: AppStoreEnvironment,
                                indent: Int? = nil) -> String {
        answer(for: input, verifier: verifier, expecting: environment, indent: indent).json
    }

    /// The same response, and why the input could not be read when it is 21002.
    public static func answer(for input: [UInt8], verifier: ReceiptVerifier, expecting environment: AppStoreEnvironment,
                              options: Options = Options(), indent: Int? = nil) -> Answer {
        // The answer holds the receipt again as base64 and every purchase twice:
        // about twice the input, reserved at once.
        var writer = JSONWriter(indent: indent, capacity: 2 * input.count + 1024)
        writer.beginObject()
        let (status, unreadable, fingerprint) = writeMembers(for: input, verifier: verifier, expecting: environment,
                                                             options: options, into: &writer)
        writer.endObject()
        return Answer(bytes: writer.bytes, status: status, unreadable: unreadable, fingerprint: fingerprint)
    }

    /// A status alone, as the App Store answers every refusal.
    static func statusOnly(_ status: Int64, unreadable: ReceiptError? = nil) -> Answer {
        var writer = JSONWriter()
        writer.beginObject()
        writer.number("status", status)
        writer.endObject()
        return Answer(bytes: writer.bytes, status: status, unreadable: unreadable)
    }

    /// The checks in the App Store's order: readable, right endpoint, authentic,
    /// shared secret; then the receipt.
    private static func writeMembers(for input: [UInt8], verifier: ReceiptVerifier, expecting environment: AppStoreEnvironment,
                                     options: Options, into writer: inout JSONWriter) -> (Int64, ReceiptError?, [UInt8]?) {
        let receipt: Receipt
        do throws(ReceiptError) {
            receipt = try Receipt.parse(input)
        } catch {
            writer.number("status", malformed)
            return (malformed, error, nil)
        }
        let purchases = receipt.purchases
        let (refused, fingerprint) = refusal(of: receipt, purchases, verifier: verifier, expecting: environment,
                                             options: options)
        if let refused {
            writer.number("status", refused)
            return (refused, nil, fingerprint)
        }
        writer.number("status", 0)
        writer.string("environment", environment.rawValue)
        // Every purchase appears twice, in in_app and in latest_receipt_info: compact
        // JSON renders each once (an indented copy would sit at another depth).
        let rendered = writer.isCompact ? purchases.map(AppStoreReceiptJSON.render) : nil
        AppStoreReceiptJSON.write(receipt, key: "receipt", requestDateMilliseconds: options.requestDateMilliseconds,
                                  renderedPurchases: rendered, into: &writer)
        // Apple returns both only "for receipts that contain auto-renewable subscriptions".
        guard purchases.contains(where: isAutoRenewable) else { return (0, nil, fingerprint) }
        let listed = options.excludeOldTransactions ? latestRenewalsOnly(purchases) : latestReceiptInfoOrder(purchases)
        writer.beginArray("latest_receipt_info")
        for index in listed {
            if let rendered { writer.raw(nil, rendered[index]) } else { AppStoreReceiptJSON.write(purchases[index], key: nil, into: &writer) }
        }
        writer.endArray()
        writer.unescapedString(field: "latest_receipt") { out in
            Base64.append(receipt.storage.encoded, to: &out)
        }
        return (0, nil, fingerprint)
    }

    /// The refusal, if any, and the receipt's fingerprint (from its verification when it got that far).
    private static func refusal(of receipt: Receipt, _ purchases: [InAppPurchase], verifier: ReceiptVerifier,
                                expecting environment: AppStoreEnvironment, options: Options) -> (Int64?, [UInt8]) {
        let receiptEnvironment = AppStoreEnvironment(receiptType: receipt.receiptType)
        if environment == .production && receiptEnvironment == .sandbox { return (sandboxReceiptSentToProduction, receipt.fingerprint) }
        if environment == .sandbox && receiptEnvironment == .production { return (productionReceiptSentToSandbox, receipt.fingerprint) }
        let verdict = verifier.verify(receipt)
        guard verdict.isValid else { return (notAuthenticated, verdict.fingerprint) }
        if !options.sharedSecrets.isEmpty, purchases.contains(where: isAutoRenewable),
           !SharedSecret.matchesAny(options.password, of: options.sharedSecrets) {
            return (sharedSecretMismatch, verdict.fingerprint)
        }
        return (nil, verdict.fingerprint)
    }

    /// Only auto-renewable subscriptions carry a subscription expiration date (1708).
    static func isAutoRenewable(_ purchase: InAppPurchase) -> Bool { purchase.expiresDate != nil }

    /// The App Store lists latest_receipt_info oldest purchase first: indices into `purchases`.
    static func latestReceiptInfoOrder(_ purchases: [InAppPurchase]) -> [Int] {
        let dates = purchases.map { $0.purchaseDate?.millisecondsSince1970 ?? .min }
        return purchases.indices.sorted { dates[$0] != dates[$1] ? dates[$0] < dates[$1] : $0 < $1 }
    }

    /// exclude-old-transactions: of each auto-renewable subscription (one original
    /// transaction id) only the last renewal stays; other purchases stay as they are.
    static func latestRenewalsOnly(_ purchases: [InAppPurchase]) -> [Int] {
        let ordered = latestReceiptInfoOrder(purchases)
        func subscription(_ index: Int) -> String {
            purchases[index].originalTransactionID ?? purchases[index].transactionID ?? ""
        }
        var lastOfSubscription: [String: Int] = [:]
        for index in ordered where isAutoRenewable(purchases[index]) { lastOfSubscription[subscription(index)] = index }
        return ordered.filter { !isAutoRenewable(purchases[$0]) || lastOfSubscription[subscription($0)] == $0 }
    }
}

/// Comparing a request's shared secret with the app's, in time that does not
/// depend on where they differ.
enum SharedSecret {
    static func matchesAny(_ candidate: String?, of secrets: [String]) -> Bool {
        guard let candidate else { return false }
        var matched = false
        for secret in secrets { matched = equal(Array(candidate.utf8), Array(secret.utf8)) || matched }
        return matched
    }

    private static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
