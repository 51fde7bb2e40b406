/// The answer the App Store's verifyReceipt would give for a receipt, produced
/// locally: for servers moving off the deprecated endpoint that still consume its JSON.
///
/// `latest_receipt_info` and `latest_receipt` are written, as Apple's are, only for
/// receipts with auto-renewable subscriptions. A receipt alone cannot tell what
/// happened after it was issued; given what a store knows
/// (`Options.known`: signed transactions and renewal infos from notifications or the
/// App Store Server API), `latest_receipt_info` lists the later renewals too, a refund
/// as `cancellation_date`, and `pending_renewal_info` is written for each of the
/// receipt's subscriptions whose renewal info is known. Never written: what neither
/// the receipt nor a signed payload states (the entries' `subscription_group_identifier`
/// and `cancellation_reason` for the receipt's own entries), and `latest_receipt` stays
/// the receipt sent (only Apple can sign a newer one). `request_date*` is written when
/// the caller gives the request's time (VerifyReceiptEndpoint does).
public enum LocalVerifyReceipt {
    /// Statuses as the App Store returns them (docs/FORMAT.md §5).
    public static let notPost: Int64 = 21000
    public static let malformed: Int64 = 21002
    public static let notAuthenticated: Int64 = 21003
    public static let sharedSecretMismatch: Int64 = 21004
    public static let sandboxReceiptSentToProduction: Int64 = 21007
    public static let productionReceiptSentToSandbox: Int64 = 21008
    /// The App Store's "receipt server unavailable; retry": what `receipt serve` answers
    /// when its store cannot be read, rather than an answer that may be out of date.
    public static let serverUnavailable: Int64 = 21005

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
        /// What a store knows of the receipt's subscriptions since it was issued (verified
        /// payloads); nil or empty: the answer is the receipt's alone.
        public var known: KnownSubscriptions?

        public init(password: String? = nil, excludeOldTransactions: Bool = false,
                    requestDateMilliseconds: Int64? = nil, sharedSecrets: [String] = [],
                    known: KnownSubscriptions? = nil) {
            self.password = password
            self.excludeOldTransactions = excludeOldTransactions
            self.requestDateMilliseconds = requestDateMilliseconds
            self.sharedSecrets = sharedSecrets
            self.known = known
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
        let receipt: Receipt
        do throws(ReceiptError) {
            receipt = try Receipt.parse(input)
        } catch {
            return statusOnly(malformed, unreadable: error, indent: indent)
        }
        return answer(for: receipt, verifier: verifier, expecting: environment, options: options, indent: indent)
    }

    /// The response for a receipt already read.
    public static func answer(for receipt: Receipt, verifier: ReceiptVerifier, expecting environment: AppStoreEnvironment,
                              options: Options = Options(), indent: Int? = nil) -> Answer {
        answer(for: receipt, judged: judge(receipt, verifier: verifier, expecting: environment, options: options),
               expecting: environment, options: options, indent: indent)
    }

    /// The response for a receipt already judged (VerifyReceiptEndpoint judges before a
    /// server looks up what its store knows, so that only a receipt that passed costs a look-up).
    static func answer(for receipt: Receipt, judged judgment: Judgment, expecting environment: AppStoreEnvironment,
                       options: Options, indent: Int? = nil) -> Answer {
        // The answer holds the receipt again as base64 and every purchase twice:
        // about three times the receipt's bytes, reserved at once.
        var writer = JSONWriter(indent: indent, capacity: 3 * receipt.storage.encoded.count + 1024)
        writer.beginObject()
        let status = writeMembers(for: receipt, judged: judgment, expecting: environment, options: options, into: &writer)
        writer.endObject()
        return Answer(bytes: writer.bytes, status: status, unreadable: nil, fingerprint: judgment.fingerprint)
    }

    /// A status alone, as the App Store answers every refusal.
    static func statusOnly(_ status: Int64, unreadable: ReceiptError? = nil, indent: Int? = nil) -> Answer {
        var writer = JSONWriter(indent: indent)
        writer.beginObject()
        writer.number("status", status)
        writer.endObject()
        return Answer(bytes: writer.bytes, status: status, unreadable: unreadable)
    }

    /// The original transaction ids of a receipt's auto-renewable subscriptions, in
    /// order of first appearance: what to ask a store about before answering.
    public static func subscriptionIDs(of receipt: Receipt) -> [String] {
        var seen = Set<String>()
        return receipt.purchases.filter(isAutoRenewable).compactMap { $0.originalTransactionID ?? $0.transactionID }
            .filter { seen.insert($0).inserted }
    }

    /// The refusal's status, or the receipt merged with what the store knows.
    private static func writeMembers(for receipt: Receipt, judged judgment: Judgment, expecting environment: AppStoreEnvironment,
                                     options: Options, into writer: inout JSONWriter) -> Int64 {
        let purchases = receipt.purchases
        if let refused = judgment.refused {
            writer.number("status", refused)
            return refused
        }
        writer.number("status", 0)
        writer.string("environment", environment.rawValue)
        // Every purchase appears twice, in in_app and in latest_receipt_info: compact
        // JSON renders each once (an indented copy would sit at another depth).
        let rendered = writer.isCompact ? purchases.map(AppStoreReceiptJSON.render) : nil
        AppStoreReceiptJSON.write(receipt, key: "receipt", requestDateMilliseconds: options.requestDateMilliseconds,
                                  renderedPurchases: rendered, into: &writer)
        // Apple returns both only "for receipts that contain auto-renewable subscriptions".
        guard purchases.contains(where: isAutoRenewable) else { return 0 }
        let subscriptions = subscriptionIDs(of: receipt)
        let known = options.known?.restricted(to: Set(subscriptions)) ?? KnownSubscriptions()
        writer.beginArray("latest_receipt_info")
        for entry in LatestReceiptInfo.entries(purchases, known: known.transactions,
                                                excludeOldTransactions: options.excludeOldTransactions) {
            switch entry {
            case .receipt(let index):
                if let rendered { writer.raw(nil, rendered[index]) } else { AppStoreReceiptJSON.write(purchases[index], key: nil, into: &writer) }
            case .signed(let transaction):
                SignedTransactionReceiptJSON.write(transaction, into: &writer)
            }
        }
        writer.endArray()
        writer.unescapedString(field: "latest_receipt") { out in
            Base64.append(receipt.storage.encoded, to: &out)
        }
        let renewals = subscriptions.compactMap(known.renewalInfo(of:))
        if !renewals.isEmpty {
            writer.beginArray("pending_renewal_info")
            for renewal in renewals { PendingRenewalInfoJSON.write(renewal, into: &writer) }
            writer.endArray()
        }
        return 0
    }

    /// What the App Store's checks decided of a receipt: the refusal's status, if any,
    /// and its fingerprint (from its verification when it got that far).
    struct Judgment: Sendable {
        let refused: Int64?
        let fingerprint: [UInt8]
    }

    /// The checks in the App Store's order: right endpoint, authentic, shared secret.
    static func judge(_ receipt: Receipt, verifier: ReceiptVerifier, expecting environment: AppStoreEnvironment,
                      options: Options) -> Judgment {
        let receiptEnvironment = AppStoreEnvironment(receiptType: receipt.receiptType)
        if environment == .production && receiptEnvironment == .sandbox {
            return Judgment(refused: sandboxReceiptSentToProduction, fingerprint: receipt.fingerprint)
        }
        if environment == .sandbox && receiptEnvironment == .production {
            return Judgment(refused: productionReceiptSentToSandbox, fingerprint: receipt.fingerprint)
        }
        let verdict = verifier.verify(receipt)
        guard verdict.isValid else { return Judgment(refused: notAuthenticated, fingerprint: verdict.fingerprint) }
        if !options.sharedSecrets.isEmpty, receipt.purchases.contains(where: isAutoRenewable),
           !SharedSecret.matchesAny(options.password, of: options.sharedSecrets) {
            return Judgment(refused: sharedSecretMismatch, fingerprint: verdict.fingerprint)
        }
        return Judgment(refused: nil, fingerprint: verdict.fingerprint)
    }

    /// Only auto-renewable subscriptions carry a subscription expiration date (1708).
    static func isAutoRenewable(_ purchase: InAppPurchase) -> Bool { purchase.expiresDate != nil }
}

/// Comparing a request's secret (a verifyReceipt shared secret, `receipt serve`'s
/// read tokens) with the ones accepted, in time that does not depend on where they differ.
public enum SharedSecret {
    public static func matchesAny(_ candidate: String?, of secrets: [String]) -> Bool {
        guard let candidate else { return false }
        var matched = false
        for secret in secrets { matched = equal(Array(candidate.utf8), Array(secret.utf8)) || matched }
        return matched
    }

    /// A secret named without being shown (a log line, an answer): the first 8 bytes of its
    /// SHA-256 in hex, which tell two tokens apart and give nothing usable.
    public static func fingerprint(_ secret: String) -> String {
        hexString(Array(Digest.sha256(Array(secret.utf8)).prefix(8)))
    }

    private static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
