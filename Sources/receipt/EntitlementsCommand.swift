import ArgumentParser
import ReceiptCore

struct EntitlementsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "entitlements",
        abstract: "Print what a verified receipt entitles its owner to at an instant, as JSON.",
        discussion: "Exit status: 0 printed; 1 the receipt did not verify; 2 unusable input or arguments.")

    @Argument(help: "The receipt file, raw DER/BER or base64; '-' reads standard input.")
    var file: String

    @Option(help: "The instant to judge at (RFC 3339, e.g. 2024-01-01T00:00:00Z or 2024-01-01T09:00:00+09:00).")
    var at: String

    @Option(help: "A JSON catalog: {\"kinds\": {id: kind}, \"non_renewing_durations_ms\": {id: ms}}.")
    var catalog: String?

    @Flag(help: "Judge without verifying: only for receipts verified some other way.")
    var unverified = false

    @OptionGroup var options: VerifierOptions

    func run() throws {
        let instant: Int64
        var products = ProductCatalog()
        do throws(ReceiptError) {
            instant = try CommandLineValues.instant(at, option: "--at")
            if let catalog {
                products = try optionFile("--catalog", catalog) { (bytes) throws(ReceiptError) in
                    try EntitlementsJSON.catalog(String(decoding: bytes, as: UTF8.self))
                }
            }
        } catch {
            throw failOption(error)
        }
        let verifier = unverified ? nil : try options.verifier()
        let receipt: Receipt
        do throws(ReceiptError) {
            receipt = try Receipt.parse(try InputFile.read(file))
        } catch {
            throw fail(error, file: file)
        }
        let entitlements: Entitlements
        if let verifier {
            do throws(ReceiptError) {
                let verdict = verifier.verify(receipt)
                entitlements = try Entitlements.of(receipt, verified: verdict, at: instant, catalog: products)
            } catch {
                printToStandardError("receipt: \(file): \(error)")
                throw ExitCode(error.status.rawValue >= 200 ? 1 : unusableInputExitCode)
            }
        } else {
            entitlements = Entitlements.ofUnverified(receipt, at: instant, catalog: products)
        }
        print(EntitlementsJSON.render(entitlements, indent: 2))
    }
}
