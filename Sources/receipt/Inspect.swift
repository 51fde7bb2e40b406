import ArgumentParser
import ReceiptCore

struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a receipt as the App Store's verifyReceipt `receipt` JSON object.")

    @Argument(help: "The receipt file, raw DER/BER or base64; '-' reads standard input.")
    var file: String

    @Flag(help: "Write compact JSON on one line.")
    var compact = false

    func run() throws {
        let receipt: Receipt
        do throws(ReceiptError) {
            receipt = try Receipt.parse(try InputFile.read(file))
        } catch {
            throw fail(error, file: file)
        }
        print(AppStoreReceiptJSON.render(receipt, indent: compact ? nil : 2))
    }
}
