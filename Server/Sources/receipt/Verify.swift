import ArgumentParser
import ReceiptCore

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Verify a receipt or a StoreKit 2 JWS: signature, chain at the signing date, Apple markers, bundle, environment, ...",
        discussion: "Exit status: 0 valid; 1 not valid; 2 unusable input or arguments.")

    @Argument(help: "The receipt (raw DER/BER or base64) or JWS (compact) file; '-' reads standard input.")
    var file: String

    @OptionGroup var options: VerifierOptions

    @Flag(help: "Print the outcome as a JSON object with `valid`, `status`, `anchor`, `fingerprint` and `steps`.")
    var json = false

    func run() throws {
        let verifier = try options.verifier()
        let result: VerificationResult
        do throws(ReceiptError) {
            let bytes = try InputFile.read(file)
            if SignedFormat(of: bytes) == .jws {
                let payload = try SignedPayload.decode(bytes)
                options.askRevocation(verifier, about: payload)
                result = verifier.verify(jws: payload)
            } else {
                result = verifier.verify(try Receipt.parse(bytes))
            }
        } catch {
            throw fail(error, file: file)
        }
        if json {
            print(result.json(indent: 2))
        } else {
            for entry in result.steps {
                print("\(entry.outcome.name.padding(7)) \(entry.step.rawValue.padding(19)) \(entry.outcome.detail)")
            }
            print("fingerprint \(ContentFingerprint.hex(result.fingerprint))  (SHA-256 of the signed content: de-duplicate on this)")
            if result.isValid && options.bundleId == nil {
                // Apple's guide makes the bundle check part of validation: a VALID without it says less.
                print("note: the bundle id was not checked; pass --bundle-id to require your app's")
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
