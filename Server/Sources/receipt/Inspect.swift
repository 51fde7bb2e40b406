import ArgumentParser
import ReceiptCore

struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a receipt as the App Store's verifyReceipt `receipt` JSON object, or a JWS decoded.",
        discussion: """
            A StoreKit 2 JWS prints as {"format": "jws", "type", "header", "payload", \
            "signed_date_ms", "certificates"}, its header and payload exactly as signed; \
            nothing is verified (use verify). \
            With --appstore-json, print instead the whole response verifyReceipt would have given, \
            produced locally (status 21002, 21003, 21007, 21008 or 0); it is verified with the \
            verify options. Unreadable input still prints the 21002 response, and exits 2 with \
            the status on stderr.
            """)

    @Argument(help: "The receipt file, raw DER/BER or base64; '-' reads standard input.")
    var file: String

    @Flag(help: "Write compact JSON on one line.")
    var compact = false

    // inspect always prints JSON; `--json`, as verify takes, is accepted so that it is not
    // refused with a suggestion of `--now`.
    @Flag(help: .hidden)
    var json = false

    @Flag(help: "Print the whole verifyReceipt response the App Store would give, produced locally.")
    var appstoreJson = false

    @Option(help: "With --appstore-json: the environment to answer as, production or sandbox.")
    var expect: String = "production"

    @OptionGroup var options: VerifierOptions

    func run() throws {
        if appstoreJson { return try runAppStoreJSON() }
        do throws(ReceiptError) {
            let bytes = try InputFile.read(file)
            if SignedFormat(of: bytes) == .jws {
                print(SignedPayloadJSON.render(try SignedPayload.decode(bytes), indent: compact ? nil : 2))
            } else {
                print(AppStoreReceiptJSON.render(try Receipt.parse(bytes), indent: compact ? nil : 2))
            }
        } catch {
            throw fail(error, file: file)
        }
    }

    private func runAppStoreJSON() throws {
        let bytes: [UInt8]
        let verifier: ReceiptVerifier
        guard let environment = AppStoreEnvironment(rawValue: expect.prefix(1).uppercased() + expect.dropFirst()) else {
            throw failOption(ReceiptError(.invalidArgument, "--expect must be production or sandbox"))
        }
        verifier = try options.verifier()
        do throws(ReceiptError) {
            bytes = try InputFile.read(file)
        } catch {
            throw fail(error, file: file)
        }
        let answer = LocalVerifyReceipt.answer(for: bytes, verifier: verifier, expecting: environment,
                                               indent: compact ? nil : 2)
        print(answer.json)
        // 21002 is still an unusable input: say why, and exit 2.
        if let unreadable = answer.unreadable { throw fail(unreadable, file: file) }
    }
}
