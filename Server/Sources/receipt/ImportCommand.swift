#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser
import Logging
import ReceiptCore
import ReceiptServer
import ReceiptServerAPIClient
import Synchronization

/// `receipt import`: fills a `receipt serve` store with the subscriptions of a list of
/// original transaction ids. The list's reading is ReceiptCore's (ImportIDList), the
/// asking, pacing and resuming ReceiptServer's; this parses flags and draws progress.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Fill a receipt serve store with the subscriptions of a list of original transaction ids.",
        discussion: """
            For customers older than Apple's 180 days of notification history (receipt sync), such as a hosted \
            service's export of subscribers. For each id, in the list's order: its whole transaction history and \
            its subscription status from the App Store Server API, every signed member verified as the server \
            verifies notifications, stored unless the store already held all of it. The list: one id per line, \
            or with --column a CSV whose first row names the columns; an entry that is no id is refused naming \
            FILE:LINE before any call. Calls are spaced to --calls-per-second for each of the two endpoints. \
            Progress goes to stderr (a bar on a terminal), the summary to stdout. Interrupted, run it again \
            with the same list: it resumes (its position is kept in the store). Safe beside a running server \
            on the same store. Exit status: 0 done; 1 an answer did not verify (those ids are named) or Apple \
            refused the credentials; 2 unusable arguments, list or store; 3 no answer (or one that may pass \
            later: 429, 5xx), as receipt api. Guide: docs/serve.md, "Moving in".
            """)

    @OptionGroup var store: StoreLocationOptions

    @Option(help: "The list of original transaction ids: one a line, or a CSV with --column; - reads stdin.")
    var ids: String

    @Option(help: "The CSV column holding the ids, as its first row names it (e.g. original_transaction_id).")
    var column: String?

    @Option(help: "Calls a second to each endpoint (transaction history, subscription statuses); default 40 in production, 4 in the sandbox: four fifths of Apple's published limits, the rest left to a running server.")
    var callsPerSecond: Int?

    @OptionGroup var source: APISourceOptions

    /// Apple's published limit for both endpoints in production, calls a second; the sandbox has a tenth.
    static let appleProductionLimit = 50

    func run() async throws {
        let (api, list, location, rate): (ServerAPIClient, ImportIDList, StoreLocation, Int)
        do throws(ReceiptError) {
            location = try store.location()
            let listName = ids == "-" ? "stdin" : ids
            do throws(ReceiptError) {
                list = try ImportIDList(try InputFile.read(ids, maxBytes: ImportIDList.maxBytes), column: column, source: listName)
            } catch where !error.detail.hasPrefix(listName) {
                throw ReceiptError(error.status, "--ids \(listName): \(error.detail)")
            }
            let limit = source.environment == .production ? Self.appleProductionLimit : Self.appleProductionLimit / 10
            rate = callsPerSecond ?? limit * 4 / 5
            guard rate >= 1, rate <= 10_000 else { throw ReceiptError(.invalidArgument, "--calls-per-second must be 1 to 10000") }
            api = try source.client()
        } catch {
            throw failOption(error)
        }
        if list.repeated + list.empty > 0 {
            printToStandardError("receipt import: \(list.ids.count) ids; \(list.repeated) listed again and \(list.empty) empty entries skipped")
        }
        let bar = ImportProgressBar(onTerminal: isatty(STDERR_FILENO) == 1)
        let summary: ReceiptServer.ImportSummary
        do {
            summary = try await ReceiptServer.importSubscriptions(storeLocation: location, api: api, list: list,
                                                                  callsPerSecond: rate, logger: Logger(label: "receipt.import"),
                                                                  progress: bar.show)
            bar.end()
        } catch let error as ReceiptServer.StoreOpenError {
            bar.end()
            printToStandardError("receipt import: \(error)")
            throw ExitCode(unusableInputExitCode)
        } catch let refused as ServerAPIError {
            bar.end()
            printToStandardError("receipt import: \(refused.failure.summary) (run it again with the same list to resume)")
            throw APICommand.exitCode(for: refused)
        } catch {
            bar.end()
            printToStandardError("receipt import: \(error) (run it again with the same list to resume)")
            throw ExitCode(1)
        }
        print("imported: \(summary.imported); already current: \(summary.alreadyCurrent); "
              + "unknown to Apple: \(summary.unknownToApple); refused: \(summary.refused); of \(summary.total) ids"
              + (summary.resumed ? "; resumed" : ""))
        if summary.unknownToApple == summary.total {
            // Not one customer of the list: the list, the app or the environment is not the one meant.
            printToStandardError("receipt import: Apple knows none of the ids in the \(source.environment.rawValue) environment "
                                 + "for \(api.credentials.bundleID): is --environment (or --bundle-id) the list's?")
            throw ExitCode(1)
        }
        if summary.refused > 0 { throw ExitCode(1) }
    }
}

/// The progress on stderr: on a terminal one line redrawn in place (a bar, the rate, the time
/// left); elsewhere (a log) a line every ten seconds. Ids refused are named on lines of their own.
final class ImportProgressBar: Sendable {
    private struct State {
        var started: Int64?
        var startDone = 0
        var lastLine: Int64 = 0
        var drawn = false
    }

    private let onTerminal: Bool
    private let state = Mutex(State())

    init(onTerminal: Bool) { self.onTerminal = onTerminal }

    @Sendable func show(_ progress: ReceiptServer.ImportProgress) {
        let now = ReceiptClock.systemNow()
        state.withLock { state in
            switch progress {
            case .refused(let id, let reason):
                if state.drawn { printToStandardError("") }
                state.drawn = false
                printToStandardError("receipt import: \(id) refused: \(reason)")
            case .position(let summary):
                if state.started == nil { (state.started, state.startDone) = (now, summary.done) }
                let finished = summary.done == summary.total
                guard onTerminal || finished || now - state.lastLine >= 10_000 else { return }
                state.lastLine = now
                let line = Self.line(summary, since: state.started ?? now, from: state.startDone, now: now)
                if onTerminal {
                    var bytes = Array(("\r\u{1B}[K" + line).utf8)
                    bytes.withUnsafeMutableBytes { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
                    state.drawn = true
                } else {
                    printToStandardError(line)
                }
            }
        }
    }

    func end() {
        state.withLock { state in
            if state.drawn { printToStandardError("") }
            state.drawn = false
        }
    }

    private static func line(_ summary: ReceiptServer.ImportSummary, since: Int64, from startDone: Int, now: Int64) -> String {
        let width = 30
        let total = max(summary.total, 1)
        let filled = summary.done * width / total
        var line = "receipt import: [" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            + "] \(summary.done)/\(summary.total) (\(summary.done * 100 / total)%)"
        let seconds = Double(now - since) / 1000
        let rate = seconds > 0 ? Double(summary.done - startDone) / seconds : 0
        if rate > 0 {
            line += ", \(Int(rate.rounded())) ids/s"
            if summary.done < summary.total {
                let left = Int((Double(summary.total - summary.done) / rate).rounded())
                line += left >= 60 ? ", about \(left / 60) min left" : ", about \(left) s left"
            }
        }
        return line
    }
}
