import ArgumentParser
@_spi(ReceiptInternal) import ReceiptCore
import ReceiptServerAPIClient

/// `receipt api CALL NAME=VALUE…`: one App Store Server API call. The request, the
/// checks, the verification of every signed member, retries and paging are
/// ReceiptCore's; this command parses flags and prints.
struct APICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api",
        abstract: "Call the App Store Server API; every signed member of the answer is verified.",
        discussion: """
            CALL is the name in Apple's server libraries (get_transaction_history, get_transaction_info, \
            get_all_subscription_statuses, ...; --list shows all with their arguments). Arguments are \
            NAME=VALUE with Apple's member names (transactionId=2000000000000001 productType=AUTO_RENEWABLE \
            sort=DESCENDING); a repeated name makes a list; --json gives them as one object (needed for \
            nested members). They are checked before anything is sent. Prints the answer as JSON: Apple's \
            members, and beside each signed member its verified payload (signedTransactions -> transactions). \
            --all follows every page and prints one page per line, with progress on stderr. \
            Exit status: 0 answered; 1 Apple refused, or an answer did not verify; 2 unusable arguments; \
            3 no answer (network error, retries spent).
            """)

    @Argument(help: "The call, e.g. get_transaction_history.")
    var call: String?

    @Argument(help: "Arguments as NAME=VALUE.")
    var arguments: [String] = []

    @Option(help: "Arguments as one JSON object (NAME=VALUE arguments are added to it).")
    var json: String?

    @Flag(help: "Follow every page (history, refunds, notifications); one JSON page per line.")
    var all = false

    @Flag(help: "List the calls and their arguments.")
    var list = false

    @OptionGroup var credentials: APICredentialOptions

    @Option(help: "production (api.storekit.apple.com), sandbox (api.storekit-sandbox.apple.com) or local-testing (needs --base-url).")
    var environment: ReceiptEnvironment = .production

    @Option(help: "Send to this URL instead of Apple's host (a mock, a proxy).")
    var baseUrl: String?

    @Flag(help: "Production only: a call naming a transaction production does not know goes once to the sandbox; the answer then says \"answered_by\": \"sandbox\".")
    var sandboxFallback = false

    @Option(help: "With --sandbox-fallback: the sandbox's URL instead of Apple's (a mock, a proxy).")
    var sandboxBaseUrl: String?

    @OptionGroup var trust: TrustOptionGroup

    @Option(help: "The app's Apple id, which production notifications and app transactions must name.")
    var appAppleId: Int64?

    @Option(help: "How many times to send again after a 429 or 5xx.")
    var retries: Int = ServerAPIExchange.defaultRetries

    @Option(help: "Seconds one exchange may take, the whole answer included; then it counts as no answer.")
    var timeout = 30

    @Flag(help: "Pretty-print the JSON.")
    var pretty = false

    static let noAnswerExitCode: Int32 = 3

    /// No answer, or a refusal that may pass later (429, 5xx), is 3; Apple's refusal 1 (sync and import alike).
    static func exitCode(for refused: ServerAPIError) -> ExitCode {
        ExitCode(refused.failure.httpStatus == 0 || refused.failure.isRetryable ? noAnswerExitCode : 1)
    }

    func run() async throws {
        if list { return printCalls() }
        let (client, name, given): (AppStoreServerAPIClient, String, [String: JSONValue])
        do throws(ReceiptError) {
            guard let call else { throw ReceiptError(.invalidArgument, "name a CALL (receipt api --list shows them)") }
            guard timeout > 0 else { throw ReceiptError(.invalidArgument, "--timeout must be positive") }
            name = try ServerAPICall.named(call).name
            given = try parsedArguments()
            let verifier = try trust.verifier(policy: VerificationPolicy(
                bundleID: try credentials.credentials().bundleID, environment: environment, appAppleID: appAppleId))
            client = AppStoreServerAPIClient(try ServerAPIClient(credentials: try credentials.credentials(),
                                                                 environment: environment, baseURL: baseUrl,
                                                                 verifier: verifier),
                                             retries: retries, timeout: .seconds(Int64(timeout)),
                                             sandboxFallback: try sandboxClient())
        } catch {
            throw failOption(error)
        }
        var pages = 0, items = 0
        do {
            for try await page in client.pages(name, given) {
                pages += 1
                var writer = JSONWriter(indent: pretty && !all ? 2 : nil)
                writer.value(nil, page.document)
                print(writer.string)
                if !all { return }
                items += Self.itemCount(page.document)
                printToStandardError("receipt api: page \(pages), \(items) items\(page.hasMore ? ", more to come" : ", done")")
            }
        } catch let refused as ServerAPIError {
            printToStandardError("receipt api: \(name): \(refused.failure.summary)")
            throw Self.exitCode(for: refused)
        } catch let error as ReceiptError {
            printToStandardError("receipt api: \(name): \(error)")
            throw ExitCode(error.status == .invalidArgument ? unusableInputExitCode : 1)
        }
    }

    /// The sandbox client of --sandbox-fallback (its verifier expects the sandbox), or nil.
    private func sandboxClient() throws(ReceiptError) -> ServerAPIClient? {
        guard sandboxFallback else {
            guard sandboxBaseUrl == nil else { throw ReceiptError(.invalidArgument, "--sandbox-base-url needs --sandbox-fallback") }
            return nil
        }
        guard environment == .production else {
            throw ReceiptError(.invalidArgument, "--sandbox-fallback is for --environment production")
        }
        let credentials = try credentials.credentials()
        let verifier = try trust.verifier(policy: VerificationPolicy(bundleID: credentials.bundleID, environment: .sandbox,
                                                                     appAppleID: appAppleId))
        return try ServerAPIClient(credentials: credentials, environment: .sandbox, baseURL: sandboxBaseUrl, verifier: verifier)
    }

    /// --json, then NAME=VALUE (a repeated name becomes a list). Values stay text:
    /// the core reads numbers and booleans from text by each argument's kind.
    private func parsedArguments() throws(ReceiptError) -> [String: JSONValue] {
        var result = try json.map { (text) throws(ReceiptError) in try ServerAPIArguments.parse(Array(text.utf8)) } ?? [:]
        var repeated: [String: [JSONValue]] = [:]
        for argument in arguments {
            guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex else {
                throw ReceiptError(.invalidArgument, "\(quoted(argument)) is not NAME=VALUE")
            }
            repeated[String(argument[..<equals]), default: []].append(.string(String(argument[argument.index(after: equals)...])))
        }
        for (name, values) in repeated { result[name] = values.count == 1 ? values[0] : .array(values) }
        return result
    }

    /// The items of a page: transactions, notifications or whatever list it holds.
    private static func itemCount(_ document: JSONValue) -> Int {
        for name in ["transactions", "notificationHistory", "data"] {
            if let items = document[name]?.arrayValue { return items.count }
        }
        return 0
    }

    private func printCalls() {
        for call in ServerAPICall.all {
            let paging = call.paging == .none ? "" : "  (paged: --all)"
            print("\(call.name)  \(call.method) \(call.pathTemplate)\(paging)")
            if !call.argumentNames.isEmpty { print("    " + call.argumentNames.joined(separator: " ")) }
        }
    }
}

private func quoted(_ text: String) -> String { "\"\(text)\"" }
