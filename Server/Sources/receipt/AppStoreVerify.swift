import ArgumentParser
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import ReceiptCore

/// verifyReceipt over HTTP. The protocol, redirects and retries included, is
/// ReceiptCore's VerifyReceiptExchange; this command only moves the bytes.
struct AppStoreVerify: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "appstore-verify",
        abstract: "Ask the App Store's verifyReceipt about a receipt, following its redirects and retries.",
        discussion: """
            Starts in production (or the sandbox with --sandbox), moves once to the other \
            environment on 21007/21008, and backs off and retries on 21005, 21009, 21100-21199, \
            is-retryable and HTTP 5xx. Never retries 21003 or 21004. Prints the response JSON. \
            Exit status: 0 accepted (0 or 21006); 1 the App Store said no; 2 unusable input or \
            arguments; 3 no usable answer (network error, timeout, malformed JSON, retries spent).
            """)

    @Argument(help: "The receipt file, raw DER/BER or base64; '-' reads standard input.")
    var file: String

    @Option(help: "The app's shared secret (needed for auto-renewable subscriptions).")
    var password: String?

    @Flag(help: "Start in the sandbox instead of production.")
    var sandbox = false

    @Option(help: "The production verifyReceipt URL (default: Apple's).")
    var endpoint: String?

    @Option(help: "The sandbox verifyReceipt URL (default: Apple's).")
    var sandboxEndpoint: String?

    @Flag(help: "Ask for only the latest renewal of each subscription.")
    var excludeOldTransactions = false

    @Option(help: "Seconds to wait for each answer, in all.")
    var timeout: Double = 10

    @Option(help: "How many times to retry a retryable answer.")
    var retries: Int = 2

    static let noUsableAnswerExitCode: Int32 = 3

    func run() throws {
        var exchange: VerifyReceiptExchange
        do throws(ReceiptError) {
            let request = try VerifyReceiptRequest(receipt: try InputFile.read(file), password: password,
                                                   excludeOldTransactions: excludeOldTransactions)
            exchange = VerifyReceiptExchange(request: request, startIn: sandbox ? .sandbox : .production,
                                             productionURL: endpoint, sandboxURL: sandboxEndpoint, retries: retries)
        } catch {
            throw fail(error, file: file)
        }
        var delay = 0
        while true {
            if delay > 0 { usleep(UInt32(delay) * 1000) }
            let (status, text) = try post(exchange.body, to: exchange.url)
            switch exchange.handle(httpStatus: status, body: text) {
            case .send(_, let wait):
                delay = wait
            case .accepted:
                print(text)
                return
            case .rejected(let code):
                print(text)
                printToStandardError("receipt: the App Store did not accept the receipt (status \(code))")
                throw ExitCode(1)
            case .unavailable(let reason):
                return try giveUp(reason)
            }
        }
    }

    private func giveUp(_ message: String) throws {
        printToStandardError("receipt: \(message)")
        throw ExitCode(Self.noUsableAnswerExitCode)
    }

    /// POSTs the body and waits for the answer: (HTTP status, body text).
    private func post(_ body: String, to address: String) throws -> (Int, String) {
        switch HTTPPost.send(Array(body.utf8), to: address, contentType: "application/json", timeout: timeout) {
        case .success(let (status, answer)):
            return (status, String(decoding: answer, as: UTF8.self))
        case .failure(let failure):
            if case .notAURL = failure { throw fail(ReceiptError(.invalidArgument, "not a URL: \(address)"), file: file) }
            printToStandardError("receipt: \(failure.description)")
            throw ExitCode(Self.noUsableAnswerExitCode)
        }
    }
}
