/// What a Retention Messaging endpoint answers, from the operator's rules file (JSON):
///
///     {"default": {"message": {"messageIdentifier": "UUID"}},
///      "rules": [{"productId": "com.example.monthly", "locale": "fr-FR",
///                 "promotionalOffer": {"messageIdentifier": "UUID", "offerIdentifier": "win-back"}},
///                {"productId": "com.example.monthly",
///                 "alternateProduct": {"messageIdentifier": "UUID", "productId": "com.example.yearly"}}]}
///
/// Each rule (and `default`) holds exactly one of Apple's realtime answers: `message`,
/// `alternateProduct`, or `promotionalOffer`, whose V2 signature the server makes per
/// request (for the rule's `productId`, else the request's, and the customer's original
/// transaction id). A rule may name a `productId`, a `locale` (`fr-FR`, or a language,
/// `fr`, for every region), both, or neither. The most specific rule that matches wins
/// (product and locale, then product, then locale, then neither), the first in the file
/// among equals; then `default`; then the empty answer (Apple shows its default).
/// At most `maxRules` rules and `maxBytes` of file: a file past either is refused.
public struct RetentionRules: Sendable {
    public enum Answer: Sendable, Hashable {
        case message(messageIdentifier: String)
        case alternateProduct(messageIdentifier: String, productID: String)
        case promotionalOffer(messageIdentifier: String, offerIdentifier: String, productID: String?)
    }

    public struct Rule: Sendable, Equatable {
        public let productID: String?
        /// Lower-cased.
        public let locale: String?
        public let answer: Answer
    }

    public let rules: [Rule]
    public let defaultAnswer: Answer?
    public static let maxRules = 10_000
    public static let maxBytes = 4 << 20

    static let messageIdentifier = ServerAPIMember("messageIdentifier", .uuid, required: true)
    static let answerMembers = [
        ServerAPIMember("message", .object([messageIdentifier])),
        ServerAPIMember("alternateProduct", .object([messageIdentifier, ServerAPIMember("productId", ServerAPICall.productID,
                                                                                         required: true)])),
        ServerAPIMember("promotionalOffer", .object([messageIdentifier,
                                                     ServerAPIMember("offerIdentifier", ServerAPICall.productID, required: true),
                                                     ServerAPIMember("productId", ServerAPICall.productID)])),
    ]
    static let rule = ServerAPIValueKind.object([ServerAPIMember("productId", ServerAPICall.productID),
                                                 ServerAPIMember("locale", .locale)] + answerMembers)
    static let file: [ServerAPIMember] = [
        ServerAPIMember("default", .object(answerMembers)),
        ServerAPIMember("rules", .list(rule, max: maxRules)),
    ]

    /// Reads a rules file; refused, naming the member at fault, when it is not one.
    public init(json bytes: [UInt8]) throws(ReceiptError) {
        let members = try JSONValue.object(bytes, maxBytes: Self.maxBytes,
                                           limits: JSONLimits(maxDepth: 8, maxValues: Self.maxRules * 16), naming: "the rules file")
        let checked = try ServerAPIMember.normalize(members, members: Self.file, within: "")
        defaultAnswer = try checked["default"].map { (value) throws(ReceiptError) in try Self.answer(value, at: "default") }
        rules = try (checked["rules"]?.arrayValue ?? []).enumerated().map { (index, rule) throws(ReceiptError) in
            Rule(productID: rule["productId"]?.stringValue, locale: rule["locale"]?.stringValue?.lowercased(),
                 answer: try Self.answer(rule, at: "rules[\(index)]"))
        }
    }

    /// The one answer an object holds.
    private static func answer(_ value: JSONValue, at place: String) throws(ReceiptError) -> Answer {
        var found: [Answer] = []
        if let message = value["message"] {
            found.append(.message(messageIdentifier: message["messageIdentifier"]?.stringValue ?? ""))
        }
        if let alternate = value["alternateProduct"] {
            found.append(.alternateProduct(messageIdentifier: alternate["messageIdentifier"]?.stringValue ?? "",
                                           productID: alternate["productId"]?.stringValue ?? ""))
        }
        if let offer = value["promotionalOffer"] {
            found.append(.promotionalOffer(messageIdentifier: offer["messageIdentifier"]?.stringValue ?? "",
                                           offerIdentifier: offer["offerIdentifier"]?.stringValue ?? "",
                                           productID: offer["productId"]?.stringValue))
        }
        guard found.count == 1 else {
            throw ReceiptError(.invalidArgument, "\(place) must hold exactly one of message, alternateProduct, promotionalOffer; "
                               + "it holds \(found.count)")
        }
        return found[0]
    }

    /// Whether any answer needs the in-app purchase key (a promotional offer is signed).
    public var signsOffers: Bool {
        (rules.map(\.answer) + [defaultAnswer].compactMap { $0 }).contains {
            if case .promotionalOffer = $0 { true } else { false }
        }
    }

    /// The answer for a customer of `productID` whose device speaks `locale`.
    public func answer(productID: String?, locale: String?) -> Answer? {
        // Apple writes en-US; en_US is read the same.
        let locale = locale.map { String($0.lowercased().map { $0 == "_" ? "-" : $0 }) }
        func localeMatches(_ wanted: String) -> Bool {
            guard let locale else { return false }
            return locale == wanted || locale.hasPrefix(wanted + "-")
        }
        var best: (rank: Int, answer: Answer)?
        for rule in rules {
            if let wanted = rule.productID, wanted != productID { continue }
            if let wanted = rule.locale, !localeMatches(wanted) { continue }
            let rank = (rule.productID != nil ? 2 : 0) + (rule.locale != nil ? 1 : 0)
            if rank > (best?.rank ?? -1) { best = (rank, rule.answer) }
            if rank == 3 { break }
        }
        return best?.answer ?? defaultAnswer
    }
}
