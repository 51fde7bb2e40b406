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
    /// DecodedRealtimeRequestBody: the App Store asking a Retention Messaging endpoint
    /// which message to show (Apple's `verify_and_decode_realtime_request`).
    case realtimeRequest = "realtime_request"
    case unknown

    /// Decided by one member each kind always has and the others never do.
    public init(members: [String: JSONValue]) {
        if members["notificationType"] != nil {
            self = .notification
        } else if members["transactionId"] != nil {
            self = .transaction
        } else if members["receiptCreationDate"] != nil || members["receiptType"] != nil {
            self = .appTransaction
        } else if members["requestIdentifier"] != nil && members["userLocale"] != nil {
            self = .realtimeRequest
        } else if members["autoRenewStatus"] != nil || members["autoRenewProductId"] != nil {
            self = .renewalInfo
        } else {
            self = .unknown
        }
    }

    /// Where each kind keeps what verification reads, as paths made once.
    var paths: SignedPayloadPaths { SignedPayloadPaths.byKind[self]! }
}

/// The members, by dotted path (`data.bundleId`), that name a payload's date, app,
/// environment and Apple id; a notification names them in whichever of its objects
/// it carries. Empty: not carried by that kind.
struct SignedPayloadPaths: Sendable {
    /// The instant the payload was signed, which its chain is judged at.
    let signingDate: MemberPath
    let bundleID: [MemberPath]
    let environment: [MemberPath]
    let appAppleID: [MemberPath]
    /// Members that are JWS themselves (a notification's), each of the kind its name
    /// says, verified with the same verifier.
    let nestedJWS: [(path: MemberPath, kind: SignedPayloadKind)]

    static let byKind: [SignedPayloadKind: SignedPayloadPaths] = [
        .transaction: SignedPayloadPaths(signingDate: "signedDate", bundleID: ["bundleId"], environment: ["environment"],
                                         appAppleID: [], nestedJWS: []),
        .renewalInfo: SignedPayloadPaths(signingDate: "signedDate", bundleID: [], environment: ["environment"],
                                         appAppleID: [], nestedJWS: []),
        .appTransaction: SignedPayloadPaths(signingDate: "receiptCreationDate", bundleID: ["bundleId"],
                                            environment: ["receiptType"], appAppleID: ["appAppleId"], nestedJWS: []),
        .notification: SignedPayloadPaths(
            signingDate: "signedDate",
            bundleID: ["data.bundleId", "summary.bundleId", "externalPurchaseToken.bundleId", "appData.bundleId"],
            environment: ["data.environment", "summary.environment", "appData.environment"],
            appAppleID: ["data.appAppleId", "summary.appAppleId", "externalPurchaseToken.appAppleId", "appData.appAppleId"],
            nestedJWS: [("data.signedTransactionInfo", .transaction), ("data.signedRenewalInfo", .renewalInfo),
                        ("appData.signedAppTransactionInfo", .appTransaction)]),
        // A realtime request names its app by Apple id only, no bundle id.
        .realtimeRequest: SignedPayloadPaths(signingDate: "signedDate", bundleID: [], environment: ["environment"],
                                             appAppleID: ["appAppleId"], nestedJWS: []),
        .unknown: SignedPayloadPaths(signingDate: "signedDate", bundleID: [], environment: [], appAppleID: [], nestedJWS: []),
    ]
}
