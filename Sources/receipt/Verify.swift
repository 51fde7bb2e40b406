import ArgumentParser
import ReceiptCore

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Verify a receipt: signature, chain at the creation date, Apple markers, bundle, version, device, VPP expiry.",
        discussion: "Exit status: 0 valid; 1 not valid; 2 unusable input or arguments.")

    @Argument(help: "The receipt file, raw DER/BER or base64; '-' reads standard input.")
    var file: String

    @OptionGroup var options: VerifierOptions

    @Flag(help: "Print the outcome as a JSON object with `valid`, `status` and `steps`.")
    var json = false

    func run() throws {
        let verifier = try options.verifier()
        let receipt: Receipt
        do throws(ReceiptError) {
            receipt = try Receipt.parse(try InputFile.read(file))
        } catch {
            throw fail(error, file: file)
        }
        let result = verifier.verify(receipt)
        if json {
            print(result.json(indent: 2))
        } else {
            for entry in result.steps {
                print("\(entry.outcome.name.padding(7)) \(entry.step.rawValue.padding(19)) \(entry.outcome.detail)")
            }
            print(result.isValid ? "VALID" : "NOT VALID: \(result.status.name)")
        }
        if !result.isValid { throw ExitCode(1) }
    }
}

extension String {
    func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
