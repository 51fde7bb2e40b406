/// Which App Store signed payload a JWS carries, told from the members it has
/// (Apple's JWS name no type). Unknown payloads keep every member and get no typing.
public enum SignedPayloadKind: String, Sendable, CaseIterable {
    /// JWSTransactionDecodedPayload (`signedTransactionInfo`).
    case transaction
    /// JWSRenewalInfoDecodedPayload (`signedRenewalInfo`).
    case renewalInfo = "renewal_info"
    /// ResponseBodyV2DecodedPayload (App Store Server Notifications V2, `signedPayload`).
    case notification
    /// JWSAppTransactionDecodedPayload (`AppTransaction`).
    case appTransaction = "app_transaction"
    case unknown

    /// Decided by one member each kind always has and the others never do.
    public init(members: [String: JSONValue]) {
        if members["notificationType"] != nil {
            self = .notification
        } else if members["transactionId"] != nil {
            self = .transaction
        } else if members["receiptCreationDate"] != nil || members["receiptType"] != nil {
            self = .appTransaction
        } else if members["autoRenewStatus"] != nil || members["autoRenewProductId"] != nil {
            self = .renewalInfo
        } else {
            self = .unknown
        }
    }

    /// The member, by dotted path (`data.bundleId`), that dates the payload: the
    /// instant its chain is evaluated at.
    var signingDatePath: String { self == .appTransaction ? "receiptCreationDate" : "signedDate" }

    /// Where the payload names its app, environment and Apple id; a notification
    /// names them in whichever of its objects it carries. Empty: not carried.
    var bundleIDPaths: [String] {
        switch self {
        case .transaction, .appTransaction: ["bundleId"]
        case .notification: ["data.bundleId", "summary.bundleId", "externalPurchaseToken.bundleId", "appData.bundleId"]
        case .renewalInfo, .unknown: []
        }
    }

    var environmentPaths: [String] {
        switch self {
        case .transaction, .renewalInfo: ["environment"]
        case .appTransaction: ["receiptType"]
        case .notification: ["data.environment", "summary.environment", "appData.environment"]
        case .unknown: []
        }
    }

    var appAppleIDPaths: [String] {
        switch self {
        case .appTransaction: ["appAppleId"]
        case .notification: ["data.appAppleId", "summary.appAppleId", "externalPurchaseToken.appAppleId", "appData.appAppleId"]
        case .transaction, .renewalInfo, .unknown: []
        }
    }

    /// Members that are JWS themselves (a notification's), verified with the same verifier.
    var nestedJWSPaths: [String] {
        self == .notification ? ["data.signedTransactionInfo", "data.signedRenewalInfo", "appData.signedAppTransactionInfo"] : []
    }
}
