/// The answer to Apple's `CONSUMPTION_REQUEST` (a customer asked for a refund of a
/// consumable, a non-consumable or a non-renewing subscription, and Apple asks the developer
/// what it knows): Send Consumption Information (V2) for the transaction, within 12 hours.
/// Its body comes from the app (Apple's member names, checked as Apple's model is) or from
/// the operator's policy file (ConsumptionPolicy); nothing is sent without
/// `customerConsented` given by one of them.
///
/// V2's body holds only what the developer knows of this purchase (consent, sample,
/// delivery, share consumed, refund preference); the account history V1 asked for
/// (lifetime purchases and refunds, play time) is no longer part of it.
public enum ConsumptionAnswer {
    public static let call = "send_consumption_information"
    /// Apple asks for the answer within 12 hours of its request.
    public static let deadlineMilliseconds: Int64 = 12 * 3_600_000
    /// The most a body may hold, in bytes (the V2 body is a few members).
    public static let maxBodyBytes = 4096

    /// The call's arguments for `transactionID` from a JSON body of Apple's V2 members,
    /// refused naming the member at fault: not an object, an unknown member, a value of the
    /// wrong kind, `customerConsented` absent or not true, or `sampleContentProvided` or `deliveryStatus` absent.
    public static func arguments(transactionID: String, body: [UInt8]) throws(ReceiptError) -> [String: JSONValue] {
        let members = try JSONValue.object(body, maxBytes: maxBodyBytes, limits: JSONLimits(maxDepth: 2, maxValues: 64),
                                           naming: "the consumption information")
        return try arguments(transactionID: transactionID, members: members)
    }

    static func arguments(transactionID: String, members: [String: JSONValue]) throws(ReceiptError) -> [String: JSONValue] {
        guard members["transactionId"] == nil else {
            throw ReceiptError(.invalidArgument, "transactionId is the path's, not a member of the body")
        }
        // Apple's model takes false too; what the customer did not consent to share is never sent.
        guard case .bool(true) = members["customerConsented"] else {
            throw ReceiptError(.invalidArgument, "customerConsented must be true: nothing is sent to the App Store without the "
                               + "customer's consent")
        }
        var arguments = members
        arguments["transactionId"] = .string(transactionID)
        return try ServerAPICall.named(call).normalize(arguments)
    }

    /// The body as JSON text (what a store keeps until it is sent), without the transaction id.
    public static func bodyText(_ arguments: [String: JSONValue]) -> String {
        var writer = JSONWriter()
        writer.beginObject()
        for (name, value) in arguments.sorted(by: { $0.key < $1.key }) where name != "transactionId" { writer.value(name, value) }
        writer.endObject()
        return writer.string
    }
}

/// The operator's consumption policy: the V2 answer per product (and a default) for
/// requests the app does not answer itself. The file says how consent was collected
/// (`consentCollected`, free text kept with the answers), since a policy answers with
/// `customerConsented` for customers the app never asked at that moment:
///
///     {"consentCollected": "in-app purchase terms, screen 3, since v2.1",
///      "default": {"customerConsented": true, "sampleContentProvided": false, "deliveryStatus": "DELIVERED"},
///      "products": {"com.example.coins": {"customerConsented": true, "sampleContentProvided": false,
///                                         "deliveryStatus": "DELIVERED", "refundPreference": "DECLINE"}}}
public struct ConsumptionPolicy: Sendable {
    public let consentCollected: String
    let answers: [String: [String: JSONValue]]
    let defaultAnswer: [String: JSONValue]?
    public static let maxBytes = 1 << 20
    public static let maxProducts = 10_000

    public init(json bytes: [UInt8]) throws(ReceiptError) {
        let members = try JSONValue.object(bytes, maxBytes: Self.maxBytes,
                                           limits: JSONLimits(maxDepth: 4, maxValues: Self.maxProducts * 16),
                                           naming: "the consumption policy")
        if let unknown = members.keys.sorted().first(where: { !["consentCollected", "default", "products"].contains($0) }) {
            throw ReceiptError(.invalidArgument, "the consumption policy has no member \(quoted(unknown)); it holds "
                               + "consentCollected, default and products")
        }
        guard let consent = members["consentCollected"]?.stringValue, !consent.isEmpty, consent.utf8.count <= 1000 else {
            throw ReceiptError(.invalidArgument, "consentCollected (how customers consented to sharing consumption "
                               + "information, 1 to 1,000 bytes of text) is required")
        }
        consentCollected = consent
        func answer(_ value: JSONValue, at place: String) throws(ReceiptError) -> [String: JSONValue] {
            guard case .object(let answer) = value else { throw ReceiptError(.invalidArgument, "\(place) must be an object") }
            do throws(ReceiptError) {
                // Checked as the app's would be, for a placeholder transaction id.
                var checked = try ConsumptionAnswer.arguments(transactionID: "1", members: answer)
                checked["transactionId"] = nil
                return checked
            } catch {
                throw ReceiptError(error.status, "\(place).\(error.detail)")
            }
        }
        defaultAnswer = try members["default"].map { (value) throws(ReceiptError) in try answer(value, at: "default") }
        var answers: [String: [String: JSONValue]] = [:]
        if let products = members["products"] {
            guard case .object(let byProduct) = products, byProduct.count <= Self.maxProducts else {
                throw ReceiptError(.invalidArgument, "products must be an object of at most \(Self.maxProducts) product ids")
            }
            for (product, value) in byProduct { answers[product] = try answer(value, at: "products.\(product)") }
        }
        self.answers = answers
    }

    /// The answer for a purchase of `productID`, or nil when the policy has none (the app's to give).
    public func arguments(transactionID: String, productID: String?) -> [String: JSONValue]? {
        guard var answer = productID.flatMap({ answers[$0] }) ?? defaultAnswer else { return nil }
        answer["transactionId"] = .string(transactionID)
        return answer
    }
}
