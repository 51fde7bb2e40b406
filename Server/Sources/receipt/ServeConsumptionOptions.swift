import ArgumentParser
import ReceiptCore
import ReceiptServer

/// `receipt serve`'s answers to Apple's consumption requests (refunds) that the app does not give.
struct ServeConsumptionOptions: ParsableArguments {
    @Option(help: "Answers to Apple's CONSUMPTION_REQUEST (refund requests) for products the app does not answer itself at POST /v1/consumption/{transactionId}: a JSON file (docs/serve.md, 'Refund consumption answers'), sent with the App Store Server API key (--api-private-key-file).")
    var consumptionPolicy: String?

    func configure(_ settings: inout ServerSettings) throws(ReceiptError) {
        settings.consumptionPolicy = try consumptionPolicy.map { (path) throws(ReceiptError) in
            try optionFile("--consumption-policy", path) { (bytes) throws(ReceiptError) in try ConsumptionPolicy(json: bytes) }
        }
    }
}
