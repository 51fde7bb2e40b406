import ArgumentParser
import Logging
import ReceiptCore
import ReceiptServer
import ReceiptServerAPIClient

/// `receipt sync`: fills a `receipt serve` store from the App Store Server API (the
/// notification history since a date, then the affected transaction histories).
/// The rows and their verification are ReceiptCore's; the pulling and resuming
/// ReceiptServer's; this parses flags and prints progress.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Fill a receipt serve store from the App Store Server API: notification history, then transaction histories.",
        discussion: """
            Reads Apple's notification history from --since (at most 180 days ago: Apple keeps no more) to --until \
            (default now), stores every notification and what it carries, then pulls the whole transaction history \
            of each subscription it named. Every signed member is verified as the server verifies notifications. \
            Progress goes to stderr. Interrupted, run it again with the same --since: it resumes where it stopped \
            (its position is kept in the store). Safe beside a running server on the same store. \
            Exit status: 0 done; 1 Apple refused, or an answer did not verify; 2 unusable arguments or store; \
            3 no answer (or one that may pass later: 429, 5xx), as receipt api.
            """)

    @OptionGroup var store: StoreLocationOptions

    @Option(help: "The first instant to read notifications from (RFC 3339), within the last 180 days.")
    var since: String

    @Option(help: "The last instant (RFC 3339); default now.")
    var until: String?

    @OptionGroup var source: APISourceOptions

    func run() async throws {
        let (api, start, end, location): (ServerAPIClient, Int64, Int64, StoreLocation)
        do throws(ReceiptError) {
            location = try store.location()
            let now = ReceiptClock.systemNow()
            start = try CommandLineValues.instant(since, option: "--since")
            end = try until.map { (text) throws(ReceiptError) in try CommandLineValues.instant(text, option: "--until") } ?? now
            let oldest = now - ReceiptServer.notificationHistoryDays * 86_400_000
            guard start >= oldest else {
                throw ReceiptError(.invalidArgument, "--since is more than \(ReceiptServer.notificationHistoryDays) days ago: "
                                   + "Apple keeps notification history for \(ReceiptServer.notificationHistoryDays) days")
            }
            guard start < end else { throw ReceiptError(.invalidArgument, "--since must be before --until") }
            api = try source.client()
        } catch {
            throw failOption(error)
        }
        let summary: ReceiptServer.SyncSummary
        do {
            summary = try await ReceiptServer.sync(storeLocation: location, api: api, since: start, until: end,
                                                   logger: Logger(label: "receipt.sync")) { line in
                printToStandardError("receipt sync: \(line)")
            }
        } catch let error as ReceiptServer.StoreOpenError {
            printToStandardError("receipt sync: \(error)")
            throw ExitCode(unusableInputExitCode)
        } catch let error as ReceiptError {
            printToStandardError("receipt sync: \(error.status.name): \(error.detail) (run again with the same --since to resume)")
            throw ExitCode(1)
        } catch let refused as ServerAPIError {
            printToStandardError("receipt sync: \(refused.failure.summary) (run again with the same --since to resume)")
            throw APICommand.exitCode(for: refused)
        } catch {
            printToStandardError("receipt sync: \(error) (run again with the same --since to resume)")
            throw ExitCode(1)
        }
        print("notifications: \(summary.notifications) in \(summary.notificationPages) pages; "
              + "subscriptions: \(summary.subscriptions) (\(summary.transactions) rows)" + (summary.resumed ? "; resumed" : ""))
    }
}
