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
        guard let url = URL(string: address) else {
            throw fail(ReceiptError(.invalidArgument, "not a URL: \(address)"), file: file)
        }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(body.utf8)
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var outcome: Result<(Int, String), Error> = .failure(URLError(.unknown))
        let task = URLSession.shared.dataTask(with: request) { data, response, error in
            if let error {
                outcome = .failure(error)
            } else {
                let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                outcome = .success((status, String(decoding: data ?? Data(), as: UTF8.self)))
            }
            done.signal()
        }
        task.resume()
        // The whole exchange gets `timeout` seconds: URLRequest's own timeout is an idle
        // timeout, and FoundationNetworking rounds it to whole seconds.
        if done.wait(timeout: .now() + timeout) == .timedOut {
            task.cancel()
            printToStandardError("receipt: \(address): no answer within \(timeout) seconds")
            throw ExitCode(Self.noUsableAnswerExitCode)
        }
        switch outcome {
        case .success(let answer):
            return answer
        case .failure(let error):
            printToStandardError("receipt: \(address): \(error.localizedDescription)")
            throw ExitCode(Self.noUsableAnswerExitCode)
        }
    }
}
