import ReceiptCore

/// Apple's Advanced Commerce in-app request models, by the names of its Swift library,
/// as typed builders: each makes the JSON that AdvancedCommerceInAppSignatureCreator
/// signs for StoreKit, with `operation` and `version` set as Apple's models set them.
/// What each value may hold (lengths, digits, currencies) is ReceiptCore's to check
/// when the request is signed (AdvancedCommerceInAppRequests in ReceiptCore), so that
/// there is one definition. Ids and UUIDs are text here (no Foundation).
public protocol AdvancedCommerceInAppRequest: Sendable {
    /// The request as the App Store reads it.
    var json: JSONValue { get }
}

/// A part of a request (an item, an offer, descriptors) as JSON.
public protocol AdvancedCommerceRequestPart: Sendable {
    var json: JSONValue { get }
}

/// An object of the members given; nil ones are left out, as Apple's encoders leave them.
func jsonObject(_ members: KeyValuePairs<String, JSONValue?>) -> JSONValue {
    var object: [String: JSONValue] = [:]
    for (name, value) in members { if let value { object[name] = value } }
    return .object(object)
}

extension Optional where Wrapped == String { var json: JSONValue? { map { .string($0) } } }
extension Optional where Wrapped: AdvancedCommerceRequestPart { var json: JSONValue? { map(\.json) } }
extension Array where Element: AdvancedCommerceRequestPart { var json: JSONValue { .array(map(\.json)) } }
extension Int64 { var json: JSONValue { .number(String(self)) } }

public enum AdvancedCommercePeriod: String, Sendable { case P1W, P1M, P2M, P3M, P6M, P1Y }
public enum AdvancedCommerceOfferPeriod: String, Sendable { case P3D, P1W, P2W, P1M, P2M, P3M, P6M, P9M, P1Y }
public enum AdvancedCommerceOfferReason: String, Sendable { case ACQUISITION, WIN_BACK, RETENTION }
public enum AdvancedCommerceReason: String, Sendable { case UPGRADE, DOWNGRADE, APPLY_OFFER }
public enum AdvancedCommerceEffective: String, Sendable { case IMMEDIATELY, NEXT_BILL_CYCLE }

public struct AdvancedCommerceRequestInfo: AdvancedCommerceRequestPart {
    public var requestReferenceId: String
    public var appAccountToken: String?
    public var consistencyToken: String?
    public init(requestReferenceId: String, appAccountToken: String? = nil, consistencyToken: String? = nil) {
        self.requestReferenceId = requestReferenceId
        self.appAccountToken = appAccountToken
        self.consistencyToken = consistencyToken
    }
    public var json: JSONValue {
        jsonObject(["requestReferenceId": .string(requestReferenceId), "appAccountToken": appAccountToken.json,
                    "consistencyToken": consistencyToken.json])
    }
}

public struct AdvancedCommerceOffer: AdvancedCommerceRequestPart {
    public var period: AdvancedCommerceOfferPeriod
    public var periodCount: Int64
    public var price: Int64
    public var reason: AdvancedCommerceOfferReason
    public init(period: AdvancedCommerceOfferPeriod, periodCount: Int64, price: Int64, reason: AdvancedCommerceOfferReason) {
        self.period = period
        self.periodCount = periodCount
        self.price = price
        self.reason = reason
    }
    public var json: JSONValue {
        jsonObject(["period": .string(period.rawValue), "periodCount": periodCount.json, "price": price.json,
                    "reason": .string(reason.rawValue)])
    }
}

public struct AdvancedCommerceDescriptors: AdvancedCommerceRequestPart {
    public var description: String
    public var displayName: String
    public init(description: String, displayName: String) {
        self.description = description
        self.displayName = displayName
    }
    public var json: JSONValue { jsonObject(["description": .string(description), "displayName": .string(displayName)]) }
}

/// An item sold: SKU, description, display name and price; a subscription's item may carry an
/// offer, a modification's a prorated price, a change the SKU it replaces, why, and when.
/// Apple's OneTimeChargeItem, SubscriptionCreateItem, SubscriptionModifyAddItem and
/// SubscriptionModifyChangeItem are this, with the members each allows.
public struct AdvancedCommerceItem: AdvancedCommerceRequestPart {
    public var SKU: String
    public var description: String
    public var displayName: String
    public var price: Int64
    public var offer: AdvancedCommerceOffer?
    public var proratedPrice: Int64?
    public var currentSKU: String?
    public var reason: AdvancedCommerceReason?
    public var effective: AdvancedCommerceEffective?
    public init(SKU: String, description: String, displayName: String, price: Int64, offer: AdvancedCommerceOffer? = nil,
                proratedPrice: Int64? = nil, currentSKU: String? = nil, reason: AdvancedCommerceReason? = nil,
                effective: AdvancedCommerceEffective? = nil) {
        self.SKU = SKU
        self.description = description
        self.displayName = displayName
        self.price = price
        self.offer = offer
        self.proratedPrice = proratedPrice
        self.currentSKU = currentSKU
        self.reason = reason
        self.effective = effective
    }
    public var json: JSONValue {
        jsonObject(["SKU": .string(SKU), "description": .string(description), "displayName": .string(displayName),
                    "price": price.json, "offer": offer.json, "proratedPrice": proratedPrice.map(\.json),
                    "currentSKU": currentSKU.json, "reason": reason.map { .string($0.rawValue) },
                    "effective": effective.map { .string($0.rawValue) }])
    }
}
public typealias AdvancedCommerceOneTimeChargeItem = AdvancedCommerceItem
public typealias AdvancedCommerceSubscriptionCreateItem = AdvancedCommerceItem
public typealias AdvancedCommerceSubscriptionModifyAddItem = AdvancedCommerceItem
public typealias AdvancedCommerceSubscriptionModifyChangeItem = AdvancedCommerceItem

/// An item named by its SKU alone (removed, or reactivated).
public struct AdvancedCommerceSKUItem: AdvancedCommerceRequestPart {
    public var SKU: String
    public init(SKU: String) { self.SKU = SKU }
    public var json: JSONValue { jsonObject(["SKU": .string(SKU)]) }
}
public typealias AdvancedCommerceSubscriptionModifyRemoveItem = AdvancedCommerceSKUItem
public typealias AdvancedCommerceSubscriptionReactivateItem = AdvancedCommerceSKUItem

public struct AdvancedCommerceSubscriptionModifyDescriptors: AdvancedCommerceRequestPart {
    public var effective: AdvancedCommerceEffective
    public var description: String?
    public var displayName: String?
    public init(effective: AdvancedCommerceEffective, description: String? = nil, displayName: String? = nil) {
        self.effective = effective
        self.description = description
        self.displayName = displayName
    }
    public var json: JSONValue {
        jsonObject(["effective": .string(effective.rawValue), "description": description.json, "displayName": displayName.json])
    }
}

public struct AdvancedCommerceSubscriptionModifyPeriodChange: AdvancedCommerceRequestPart {
    public var effective: AdvancedCommerceEffective
    public var period: AdvancedCommercePeriod
    public init(effective: AdvancedCommerceEffective, period: AdvancedCommercePeriod) {
        self.effective = effective
        self.period = period
    }
    public var json: JSONValue { jsonObject(["effective": .string(effective.rawValue), "period": .string(period.rawValue)]) }
}

/// The members every in-app request starts with.
func inAppRequest(_ operation: String, _ requestInfo: AdvancedCommerceRequestInfo,
                  _ members: KeyValuePairs<String, JSONValue?>) -> JSONValue {
    guard case .object(var object) = jsonObject(members) else { return .null }
    object["operation"] = .string(operation)
    object["version"] = .string("1")
    object["requestInfo"] = requestInfo.json
    return .object(object)
}

public struct AdvancedCommerceOneTimeChargeCreateRequest: AdvancedCommerceInAppRequest {
    public var requestInfo: AdvancedCommerceRequestInfo
    public var currency: String
    public var item: AdvancedCommerceOneTimeChargeItem
    public var taxCode: String
    public var storefront: String?
    public init(requestInfo: AdvancedCommerceRequestInfo, currency: String, item: AdvancedCommerceOneTimeChargeItem,
                taxCode: String, storefront: String? = nil) {
        self.requestInfo = requestInfo
        self.currency = currency
        self.item = item
        self.taxCode = taxCode
        self.storefront = storefront
    }
    public var json: JSONValue {
        inAppRequest("CREATE_ONE_TIME_CHARGE", requestInfo, ["currency": .string(currency), "item": item.json,
                                                             "taxCode": .string(taxCode), "storefront": storefront.json])
    }
}

public struct AdvancedCommerceSubscriptionCreateRequest: AdvancedCommerceInAppRequest {
    public var requestInfo: AdvancedCommerceRequestInfo
    public var currency: String
    public var descriptors: AdvancedCommerceDescriptors
    public var items: [AdvancedCommerceSubscriptionCreateItem]
    public var period: AdvancedCommercePeriod
    public var taxCode: String
    public var previousTransactionId: String?
    public var storefront: String?
    public init(requestInfo: AdvancedCommerceRequestInfo, currency: String, descriptors: AdvancedCommerceDescriptors,
                items: [AdvancedCommerceSubscriptionCreateItem], period: AdvancedCommercePeriod, taxCode: String,
                previousTransactionId: String? = nil, storefront: String? = nil) {
        self.requestInfo = requestInfo
        self.currency = currency
        self.descriptors = descriptors
        self.items = items
        self.period = period
        self.taxCode = taxCode
        self.previousTransactionId = previousTransactionId
        self.storefront = storefront
    }
    public var json: JSONValue {
        inAppRequest("CREATE_SUBSCRIPTION", requestInfo, [
            "currency": .string(currency), "descriptors": descriptors.json, "items": items.json,
            "period": .string(period.rawValue), "taxCode": .string(taxCode),
            "previousTransactionId": previousTransactionId.json, "storefront": storefront.json,
        ])
    }
}

public struct AdvancedCommerceSubscriptionModifyInAppRequest: AdvancedCommerceInAppRequest {
    public var requestInfo: AdvancedCommerceRequestInfo
    public var transactionId: String
    public var retainBillingCycle: Bool
    public var addItems: [AdvancedCommerceSubscriptionModifyAddItem]?
    public var changeItems: [AdvancedCommerceSubscriptionModifyChangeItem]?
    public var removeItems: [AdvancedCommerceSubscriptionModifyRemoveItem]?
    public var currency: String?
    public var descriptors: AdvancedCommerceSubscriptionModifyDescriptors?
    public var periodChange: AdvancedCommerceSubscriptionModifyPeriodChange?
    public var storefront: String?
    public var taxCode: String?
    public init(requestInfo: AdvancedCommerceRequestInfo, transactionId: String, retainBillingCycle: Bool,
                addItems: [AdvancedCommerceSubscriptionModifyAddItem]? = nil,
                changeItems: [AdvancedCommerceSubscriptionModifyChangeItem]? = nil,
                removeItems: [AdvancedCommerceSubscriptionModifyRemoveItem]? = nil, currency: String? = nil,
                descriptors: AdvancedCommerceSubscriptionModifyDescriptors? = nil,
                periodChange: AdvancedCommerceSubscriptionModifyPeriodChange? = nil, storefront: String? = nil,
                taxCode: String? = nil) {
        self.requestInfo = requestInfo
        self.transactionId = transactionId
        self.retainBillingCycle = retainBillingCycle
        self.addItems = addItems
        self.changeItems = changeItems
        self.removeItems = removeItems
        self.currency = currency
        self.descriptors = descriptors
        self.periodChange = periodChange
        self.storefront = storefront
        self.taxCode = taxCode
    }
    public var json: JSONValue {
        inAppRequest("MODIFY_SUBSCRIPTION", requestInfo, [
            "transactionId": .string(transactionId), "retainBillingCycle": .bool(retainBillingCycle),
            "addItems": addItems?.json, "changeItems": changeItems?.json, "removeItems": removeItems?.json,
            "currency": currency.json, "descriptors": descriptors.json, "periodChange": periodChange.json,
            "storefront": storefront.json, "taxCode": taxCode.json,
        ])
    }
}

public struct AdvancedCommerceSubscriptionReactivateInAppRequest: AdvancedCommerceInAppRequest {
    public var requestInfo: AdvancedCommerceRequestInfo
    public var transactionId: String
    public var items: [AdvancedCommerceSubscriptionReactivateItem]?
    public var storefront: String?
    public init(requestInfo: AdvancedCommerceRequestInfo, transactionId: String,
                items: [AdvancedCommerceSubscriptionReactivateItem]? = nil, storefront: String? = nil) {
        self.requestInfo = requestInfo
        self.transactionId = transactionId
        self.items = items
        self.storefront = storefront
    }
    public var json: JSONValue {
        inAppRequest("REACTIVATE_SUBSCRIPTION", requestInfo, ["transactionId": .string(transactionId), "items": items?.json,
                                                              "storefront": storefront.json])
    }
}
