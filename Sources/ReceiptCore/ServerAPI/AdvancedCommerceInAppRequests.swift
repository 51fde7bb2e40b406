/// The Advanced Commerce API's in-app requests: what an app hands StoreKit to buy or
/// change a purchase, signed by its server (SignedRequestCreators.advancedCommerceInAppRequest).
/// Each `operation` has the members of Apple's request model (its Python library's
/// `AdvancedCommerceOneTimeChargeCreateRequest`, `…SubscriptionCreateRequest`,
/// `…SubscriptionModifyInAppRequest`, `…SubscriptionReactivateInAppRequest`), checked by
/// the same kinds as the server calls' bodies, so that a request the App Store would
/// refuse is refused here, by name, before it is signed.
enum AdvancedCommerceInAppRequests {
    typealias Member = ServerAPIMember
    static let sku = ServerAPICall.sku
    static let price = ServerAPIValueKind.integer(0...Int64.max)
    static let effective = ServerAPICall.effective
    /// Apple's AdvancedCommercePeriod and AdvancedCommerceOfferPeriod.
    static let period = ServerAPIValueKind.names(["P1W", "P1M", "P2M", "P3M", "P6M", "P1Y"])
    static let offerPeriod = ServerAPIValueKind.names(["P3D", "P1W", "P2W", "P1M", "P2M", "P3M", "P6M", "P9M", "P1Y"])

    /// An offer on a subscription item: 1 to 12 periods (Apple's validator), a price, a reason.
    static let offer = ServerAPIValueKind.object([
        Member("period", offerPeriod, required: true),
        Member("periodCount", .integer(1...12), required: true),
        Member("price", price, required: true),
        Member("reason", .names(["ACQUISITION", "WIN_BACK", "RETENTION"]), required: true),
    ])

    /// SKU, description and display name: every item that is sold.
    static func soldItem(_ more: [Member]) -> ServerAPIValueKind {
        .object([Member("SKU", sku, required: true),
                 Member("description", ServerAPICall.itemDescription, required: true),
                 Member("displayName", ServerAPICall.displayName, required: true)] + more)
    }

    static func items(_ element: ServerAPIValueKind) -> ServerAPIValueKind { .list(element, max: ServerAPICall.maxItems) }

    /// The members every in-app request has; `version` is "1", the only one Apple defines.
    static func request(_ operation: String, _ members: [Member]) -> (String, ServerAPIValueKind) {
        (operation, .object([Member("operation", .names([operation]), required: true),
                             Member("version", .names(["1"]), required: true),
                             Member("requestInfo", ServerAPICall.requestInfo, required: true)] + members))
    }

    static let operations: [(String, ServerAPIValueKind)] = [
        request("CREATE_ONE_TIME_CHARGE", [
            Member("currency", .currency, required: true),
            Member("item", soldItem([Member("price", price, required: true)]), required: true),
            Member("taxCode", .identifier(maxLength: 64), required: true),
            Member("storefront", .storefront),
        ]),
        request("CREATE_SUBSCRIPTION", [
            Member("currency", .currency, required: true),
            Member("descriptors", .object([Member("description", ServerAPICall.itemDescription, required: true),
                                           Member("displayName", ServerAPICall.displayName, required: true)]), required: true),
            Member("items", items(soldItem([Member("price", price, required: true), Member("offer", offer)])), required: true),
            Member("period", period, required: true),
            Member("taxCode", .identifier(maxLength: 64), required: true),
            Member("previousTransactionId", .transactionID),
            Member("storefront", .storefront),
        ]),
        request("MODIFY_SUBSCRIPTION", [
            Member("transactionId", .transactionID, required: true),
            Member("retainBillingCycle", .bool, required: true),
            Member("addItems", items(soldItem([Member("price", price, required: true), Member("offer", offer),
                                               Member("proratedPrice", price)]))),
            Member("changeItems", items(soldItem([
                Member("currentSKU", sku, required: true), Member("price", price, required: true),
                Member("reason", .names(["UPGRADE", "DOWNGRADE", "APPLY_OFFER"]), required: true),
                Member("effective", effective, required: true), Member("offer", offer), Member("proratedPrice", price),
            ]))),
            Member("removeItems", items(.object([Member("SKU", sku, required: true)]))),
            Member("currency", .currency),
            Member("descriptors", .object([Member("effective", effective, required: true),
                                           Member("description", ServerAPICall.itemDescription),
                                           Member("displayName", ServerAPICall.displayName)])),
            Member("periodChange", .object([Member("effective", effective, required: true),
                                            Member("period", period, required: true)])),
            Member("storefront", .storefront),
            Member("taxCode", .identifier(maxLength: 64)),
        ]),
        request("REACTIVATE_SUBSCRIPTION", [
            Member("transactionId", .transactionID, required: true),
            Member("items", items(.object([Member("SKU", sku, required: true)]))),
            Member("storefront", .storefront),
        ]),
    ]

    static var operationNames: [String] { operations.map(\.0) }

    /// Refuses `request` unless it is one of the operations with its model's members,
    /// naming the first member at fault (`item.displayName must be 1 to 30 characters`).
    static func check(_ request: JSONValue) throws(ReceiptError) {
        guard case .object(let members) = request else {
            throw ReceiptError(.notAnObject, "the request is \(request.kindName), not an object")
        }
        let operation = members["operation"]?.stringValue
        guard let (_, kind) = operations.first(where: { $0.0 == operation }) else {
            throw ReceiptError(.invalidArgument, "operation must be one of \(operationNames.joined(separator: ", "))"
                               + (operation.map { "; got \(quoted($0))" } ?? "; none given"))
        }
        _ = try kind.normalized(request, name: "")
    }
}
