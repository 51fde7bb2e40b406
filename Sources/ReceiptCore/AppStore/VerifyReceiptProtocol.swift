/// The App Store's verifyReceipt protocol (docs/FORMAT.md §5), minus the transport: the
/// request body, the response, and what to do next. HTTP lives with the callers
/// (the CLI, the Python binding), so the library stays free of network code.
public enum AppStoreEnvironment: String, Sendable, CaseIterable {
    case production = "Production"
    case sandbox = "Sandbox"

    public var endpoint: String { staticEndpoint.description }

    /// The same, in static storage that C callers may keep forever.
    public var staticEndpoint: StaticString {
        switch self {
        case .production: "https://buy.itunes.apple.com/verifyReceipt"
        case .sandbox: "https://sandbox.itunes.apple.com/verifyReceipt"
        }
    }

    /// The same environment, as a verification policy names it (the C ABI has one
    /// receipt_environment_t for both).
    package var receiptEnvironment: ReceiptEnvironment { self == .production ? .production : .sandbox }

    /// The endpoint a receipt belongs to, from its receipt_type; Xcode's
    /// receipts count as sandbox ones, as the App Store answers them with 21007.
    public init?(receiptType: String?) {
        switch ReceiptEnvironment(receiptType: receiptType) {
        case .production: self = .production
        case .sandbox, .xcode: self = .sandbox
        case .localTesting, nil: return nil
        }
    }
}

public struct VerifyReceiptRequest: Sendable {
    /// The receipt as base64, which is what the App Store expects.
    public let receiptData: String
    public let password: String?
    public let excludeOldTransactions: Bool

    /// `receipt` is raw DER/BER or base64 text; it is sent as base64 either way,
    /// after checking that it is a receipt at all.
    public init(receipt: [UInt8], password: String? = nil, excludeOldTransactions: Bool = false) throws(ReceiptError) {
        let parsed = try Receipt.parse(receipt)
        receiptData = Base64.encode(parsed.storage.encoded)
        self.password = password
        self.excludeOldTransactions = excludeOldTransactions
    }

    public var jsonBody: String {
        var writer = JSONWriter()
        writer.beginObject()
        writer.string("receipt-data", receiptData)
        if let password { writer.string("password", password) }
        writer.bool("exclude-old-transactions", excludeOldTransactions)
        writer.endObject()
        return writer.string
    }
}

/// What a server should do with a verifyReceipt answer.
public enum NextStep: String, Sendable {
    /// 0, or 21006 (valid, subscription expired): use the answer.
    case accept
    /// 21007: the receipt is from the sandbox; send it there.
    case retryInSandbox = "retry_in_sandbox"
    /// 21008: the receipt is from production; send it there.
    case retryInProduction = "retry_in_production"
    /// 21005, 21009, 21100–21199, or `is-retryable`: the App Store's trouble; back off and retry.
    case retryLater = "retry_later"
    /// Anything else, 21003 and 21004 always: retrying cannot help.
    case reject
}

/// pending_renewal_info, one entry per auto-renewable subscription.
public struct PendingRenewalInfo: Sendable, Equatable {
    public let originalTransactionID: String?
    public let productID: String?
    public let autoRenewProductID: String?
    public let autoRenewStatus: Bool?
    /// 1 cancelled, 2 billing error, 3 declined price increase, 4 product unavailable, 5 unknown.
    public let expirationIntent: Int64?
    public let isInBillingRetryPeriod: Bool?
    public let priceConsentStatus: Int64?
    public let gracePeriodExpiresDateMilliseconds: Int64?
}

public struct VerifyReceiptResponse: Sendable {
    public let status: Int64
    public let environment: AppStoreEnvironment?
    /// `is-retryable`, also spelled `is_retryable` in the wild; nil when neither is present.
    public let isRetryable: Bool?
    public let receipt: JSONValue?
    public let latestReceipt: String?
    public let latestReceiptInfo: [JSONValue]
    public let pendingRenewalInfo: [PendingRenewalInfo]

    public static func parse(_ text: String) throws(ReceiptError) -> VerifyReceiptResponse {
        let document = try JSONValue.parse(text)
        guard let status = document["status"]?.int64Value else {
            throw ReceiptError(.badJSON, "the response has no numeric \"status\"")
        }
        let retryable = document["is-retryable"] ?? document["is_retryable"]
        return VerifyReceiptResponse(
            status: status,
            environment: document["environment"]?.stringValue.flatMap(AppStoreEnvironment.init(rawValue:)),
            isRetryable: retryable?.boolValue ?? retryable?.int64Value.map { $0 != 0 },
            receipt: document["receipt"],
            latestReceipt: document["latest_receipt"]?.stringValue,
            latestReceiptInfo: document["latest_receipt_info"]?.arrayValue ?? [],
            pendingRenewalInfo: (document["pending_renewal_info"]?.arrayValue ?? []).map(PendingRenewalInfo.init))
    }

    public var nextStep: NextStep { Self.nextStep(status: status, isRetryable: isRetryable) }

    static func nextStep(status: Int64, isRetryable: Bool?) -> NextStep {
        switch status {
        case 0, 21006: .accept
        case 21007: .retryInSandbox
        case 21008: .retryInProduction
        case 21003, 21004: .reject
        case 21005, 21009, 21100...21199: .retryLater
        default: isRetryable == true ? .retryLater : .reject
        }
    }
}

extension PendingRenewalInfo {
    init(_ entry: JSONValue) {
        func flag(_ key: String) -> Bool? { entry[key]?.int64Value.map { $0 != 0 } ?? entry[key]?.boolValue }
        originalTransactionID = entry["original_transaction_id"]?.stringValue
        productID = entry["product_id"]?.stringValue
        autoRenewProductID = entry["auto_renew_product_id"]?.stringValue
        autoRenewStatus = flag("auto_renew_status")
        expirationIntent = entry["expiration_intent"]?.int64Value
        isInBillingRetryPeriod = flag("is_in_billing_retry_period")
        priceConsentStatus = entry["price_consent_status"]?.int64Value
        gracePeriodExpiresDateMilliseconds = entry["grace_period_expires_date_ms"]?.int64Value
    }
}
