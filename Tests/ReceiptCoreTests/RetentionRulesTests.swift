@testable import ReceiptCore
import Testing

/// Retention Messaging's rules file: what it may hold, and which rule answers a request.
struct RetentionRulesTests {
    static let one = "00000000-0000-0000-0000-000000000001", two = "00000000-0000-0000-0000-000000000002"

    private func rules(_ text: String) throws(ReceiptError) -> RetentionRules { try RetentionRules(json: Array(text.utf8)) }

    @Test func theMostSpecificRuleWinsThenTheFirstThenTheDefault() throws {
        let file = try rules(#"{"default": {"message": {"messageIdentifier": "\#(Self.one)"}}, "rules": ["#
            + #"{"locale": "de", "message": {"messageIdentifier": "\#(Self.two)"}},"#
            + #"{"productId": "p", "alternateProduct": {"messageIdentifier": "\#(Self.one)", "productId": "q"}},"#
            + #"{"productId": "p", "alternateProduct": {"messageIdentifier": "\#(Self.two)", "productId": "r"}},"#
            + #"{"productId": "p", "locale": "de-AT", "promotionalOffer": {"messageIdentifier": "\#(Self.one)", "offerIdentifier": "o"}}]}"#)
        #expect(file.answer(productID: "p", locale: "de-AT") == .promotionalOffer(messageIdentifier: Self.one,
                                                                                  offerIdentifier: "o", productID: nil))
        #expect(file.answer(productID: "p", locale: "de_DE") == .alternateProduct(messageIdentifier: Self.one, productID: "q"))
        #expect(file.answer(productID: "x", locale: "DE-de") == .message(messageIdentifier: Self.two))
        #expect(file.answer(productID: "x", locale: "dk") == .message(messageIdentifier: Self.one))
        #expect(file.answer(productID: nil, locale: nil) == .message(messageIdentifier: Self.one))
        #expect(file.signsOffers)
        #expect(try rules("{}").answer(productID: "p", locale: "en") == nil)
        #expect(try !rules(#"{"default": {"message": {"messageIdentifier": "\#(Self.one)"}}}"#).signsOffers)
    }

    @Test func aFileThatIsNotRulesIsRefusedByTheMemberAtFault() {
        let refusals = [
            (#"{"rules": [{"message": {"messageIdentifier": "\#(Self.one)"}, "promotionalOffer": {"messageIdentifier": "\#(Self.one)", "offerIdentifier": "o"}}]}"#,
             "rules[0] must hold exactly one"),
            (#"{"rules": [{"alternateProduct": {"messageIdentifier": "\#(Self.one)"}}]}"#, "rules[0].alternateProduct.productId is required"),
            (#"{"default": 1}"#, "default must be an object"),
            ("[1]", "not an object"),
            (String(repeating: " ", count: RetentionRules.maxBytes + 1), "over"),
        ]
        for (text, named) in refusals {
            #expect { _ = try rules(text) } throws: { ($0 as? ReceiptError)?.detail.contains(named) == true }
        }
    }
}
