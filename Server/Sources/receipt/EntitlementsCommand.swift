import ArgumentParser
import ReceiptCore

struct EntitlementsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "entitlements",
        abstract: "Print what a verified receipt and signed transactions entitle their owner to at an instant, as JSON.",
        discussion: """
            Give one customer's receipt (at most one), StoreKit 2 signed transactions (JWS), or both: \
            a transaction in both, or twice, counts once. A notification counts as the transaction it \
            carries. A renewal info (or a notification's) names a billing grace period: until it ends, \
            the subscription's last period stays active, as Apple grants it. \
            Exit status: 0 printed; 1 something did not verify; 2 unusable input or arguments.
            """)

    @Argument(help: "The receipt (raw DER/BER or base64) and JWS transaction files; '-' reads standard input.")
    var files: [String]

    @Option(help: "The instant to judge at (RFC 3339, e.g. 2024-01-01T00:00:00Z or 2024-01-01T09:00:00+09:00).")
    var at: String

    @Option(help: "A JSON catalog: {\"kinds\": {id: kind}, \"non_renewing_durations_ms\": {id: ms}}.")
    var catalog: String?

    @Flag(help: "Judge without verifying: only for receipts verified some other way.")
    var unverified = false

    @Flag(help: "Write compact JSON on one line.")
    var compact = false

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
        var receipt: (file: String, receipt: Receipt)?
        var transactions: [(file: String, payload: SignedPayload)] = []  // in the order given: errors name their index
        for file in files {
            do throws(ReceiptError) {
                let bytes = try InputFile.read(file)
                if SignedFormat(of: bytes) == .jws {
                    transactions.append((file, try SignedPayload.decode(bytes)))
                } else if receipt == nil {
                    receipt = (file, try Receipt.parse(bytes))
                } else {
                    throw ReceiptError(.invalidArgument, "a second receipt; one customer has one (\(receipt!.file))")
                }
            } catch {
                throw fail(error, file: file)
            }
        }
        let entitlements: Entitlements
        let names = transactions.map(\.file) + (receipt.map { [$0.file] } ?? [])
        do throws(ReceiptError) {
            if let verifier {
                entitlements = try Entitlements.of(payloads: transactions.map { ($0.payload, verifier.verify(jws: $0.payload)) },
                                                   receipt: receipt.map { ($0.receipt, verifier.verify($0.receipt)) },
                                                   at: instant, catalog: products, names: names)
            } else {
                entitlements = try Entitlements.ofUnverified(payloads: transactions.map(\.payload), receipt: receipt?.receipt,
                                                             at: instant, catalog: products, names: names)
            }
        } catch {
            printToStandardError("receipt: \(error)")
            throw ExitCode(error.status.rawValue >= 200 ? 1 : unusableInputExitCode)
        }
        print(EntitlementsJSON.render(entitlements, indent: compact ? nil : 2))
    }
}
