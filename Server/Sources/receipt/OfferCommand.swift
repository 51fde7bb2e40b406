import ArgumentParser
import Foundation
@_spi(ReceiptInternal) import ReceiptCore

/// `receipt offer …`: the signed requests a server makes for its app, with the
/// App Store Connect key (the signing itself is ReceiptCore's SignedRequestCreators).
struct OfferCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "offer",
        abstract: "Sign promotional offers, introductory-offer eligibility and Advanced Commerce requests.",
        discussion: """
            promotional: the original promotional-offer signature (prints JSON with the key id, nonce, \
            timestamp and base64 signature the app passes to StoreKit). v2, introductory and \
            advanced-commerce print a compact JWS. Credentials as for `receipt api` (flags or APPSTORE_*).
            """,
        subcommands: [Promotional.self, PromotionalV2.self, Introductory.self, AdvancedCommerce.self])

    /// Runs `sign`, printing its result; a refusal exits 2 with the detail.
    static func printing(_ sign: () throws(ReceiptError) -> String) throws {
        do throws(ReceiptError) {
            print(try sign())
        } catch {
            throw failOption(error)
        }
    }

    struct Promotional: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The original promotional-offer signature.")
        @OptionGroup var credentials: APICredentialOptions
        @Option(help: "The subscription's product id.") var productId: String
        @Option(help: "The promotional offer id.") var offerId: String
        @Option(help: "The app account token (application username), may be empty.") var applicationUsername = ""
        @Option(help: "A UUID; a new one when omitted.") var nonce: String?
        @Option(help: "Epoch milliseconds; now when omitted.") var timestamp: Int64?

        func run() throws {
            try OfferCommand.printing { () throws(ReceiptError) in
                let keys = try credentials.credentials(issuerRequired: false)
                let nonce = nonce ?? UUID().uuidString.lowercased()
                let timestamp = timestamp ?? Int64(Date().timeIntervalSince1970 * 1000)
                let signature = try SignedRequestCreators.promotionalOfferSignature(
                    keys, productIdentifier: productId, subscriptionOfferID: offerId,
                    applicationUsername: applicationUsername, nonce: nonce, timestampMilliseconds: timestamp)
                var writer = JSONWriter()
                writer.beginObject()
                writer.string("keyIdentifier", keys.keyID)
                writer.string("nonce", nonce.lowercased())
                writer.number("timestamp", timestamp)
                writer.string("signature", signature)
                writer.endObject()
                return writer.string
            }
        }
    }

    struct PromotionalV2: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "v2", abstract: "A promotional offer V2 JWS.")
        @OptionGroup var credentials: APICredentialOptions
        @Option(help: "The product id.") var productId: String
        @Option(help: "The offer identifier.") var offerIdentifier: String
        @Option(help: "Any transaction id of the customer (recommended).") var transactionId: String?

        func run() throws {
            try OfferCommand.printing { () throws(ReceiptError) in
                try SignedRequestCreators.promotionalOfferV2(try credentials.credentials(), productID: productId,
                                                             offerIdentifier: offerIdentifier, transactionID: transactionId)
            }
        }
    }

    struct Introductory: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "An introductory-offer eligibility JWS.")
        @OptionGroup var credentials: APICredentialOptions
        @Option(help: "The product id.") var productId: String
        @Option(help: "Any transaction id of the customer.") var transactionId: String
        @Flag(inversion: .prefixedNo, help: "Whether the customer may have the introductory offer.") var allow: Bool

        func run() throws {
            try OfferCommand.printing { () throws(ReceiptError) in
                try SignedRequestCreators.introductoryOfferEligibility(try credentials.credentials(), productID: productId,
                                                                       allowIntroductoryOffer: allow, transactionID: transactionId)
            }
        }
    }

    struct AdvancedCommerce: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "advanced-commerce",
                                                        abstract: "An Advanced Commerce API in-app request JWS.")
        @OptionGroup var credentials: APICredentialOptions
        @Argument(help: "The request, a JSON object ('-' reads standard input).") var request: String

        func run() throws {
            try OfferCommand.printing { () throws(ReceiptError) in
                try SignedRequestCreators.advancedCommerceInAppRequest(try credentials.credentials(),
                                                                       requestJSON: try optionFile("request", request) { $0 })
            }
        }
    }
}
