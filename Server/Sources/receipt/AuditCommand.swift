import ArgumentParser
import Logging
import ReceiptCore
import ReceiptServer

/// `receipt audit`: whether a `receipt serve` store's rows and figures are what Apple signed.
/// The checking is ReceiptCore's (StoredRowCheck, FigureComparison) over ReceiptServer's
/// reads and figures (ReceiptServer.audit); this parses flags and prints.
struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Check that every row and figure of a receipt serve store comes from a JWS Apple signed.",
        discussion: """
            Verifies every stored JWS again (transactions, renewal infos, withdrawn consents) with the trust given \
            (Apple's root unless --no-apple-root; --anchor, --allow-xcode), each at its signing, for --bundle-id \
            and --environment, or else for the app and environment the servers on the store claimed (a row of the \
            store itself: stderr says which were used); compares each column a JWS gives with the column held; \
            then computes every figure of GET /v1/stats/FIGURE twice, from the store as it is and from a scratch \
            store made from the verified JWS alone, and compares the answers (CSV) line by line: at now for the \
            figures judged at an instant, by month from 2008 to five years ahead and by day over the last year for \
            the others, over all products and for each. Each difference is printed on a line of its own as it is found, then a summary; progress \
            goes to stderr. It writes no row and no schema: a store missing or of another schema version is refused. Run it \
            on a store no server is writing to (or a copy of one): a notification stored during the audit can show \
            as a difference. Exit status: 0 no difference; 1 a difference; 2 unusable arguments or store (missing, \
            of another version, or failing during the audit). Guide: docs/serve.md, "Checking the figures".
            """)

    @OptionGroup var store: StoreLocationOptions

    @OptionGroup var trust: TrustOptionGroup

    @Option(help: "The bundle id every JWS must name (repeatable: any of them); the store's own when omitted.")
    var bundleId: [String] = []

    @Option(help: "The environment every JWS must name (production, sandbox, xcode, local-testing); the store's own when omitted.")
    var environment: ReceiptEnvironment?

    @Option(help: "The app's Apple id the app transactions of withdrawn consents must name (required for production ones).")
    var appAppleId: Int64?

    func run() async throws {
        let (location, verifier): (StoreLocation, ReceiptVerifier)
        do throws(ReceiptError) {
            guard bundleId.isEmpty == (environment == nil) else {
                throw ReceiptError(.invalidArgument, "--bundle-id and --environment go together (or neither: the store's own)")
            }
            location = try store.location()
            var policy = VerificationPolicy(bundleID: bundleId.first, environment: environment, appAppleID: appAppleId)
            policy.otherBundleIDs = Array(bundleId.dropFirst())
            verifier = try trust.verifier(policy: policy)
        } catch {
            throw failOption(error)
        }
        let summary: ReceiptServer.AuditSummary
        do {
            summary = try await ReceiptServer.audit(storeLocation: location, verifier: verifier, now: ReceiptClock.systemNow(),
                                                    logger: Logger(label: "receipt.audit"), report: { print($0) },
                                                    progress: { printToStandardError("receipt audit: " + $0) })
        } catch let error as ReceiptServer.StoreOpenError {
            printToStandardError("receipt audit: \(error)")
            throw ExitCode(unusableInputExitCode)
        } catch let error as ReceiptServer.AuditRefused {
            printToStandardError("receipt audit: \(error)")
            throw ExitCode(unusableInputExitCode)
        } catch {
            // The store failed under the audit (gone, a disk full): no verdict, which exit 1 would be.
            printToStandardError("receipt audit: the audit stopped: \(error)")
            throw ExitCode(unusableInputExitCode)
        }
        let rows = summary.rows.map { "\($0.count) \($0.table)" }.joined(separator: ", ")
        print("audited: \(rows); \(summary.figures) figures recomputed from the JWS alone; \(summary.differences) differences")
        if summary.differences > 0 { throw ExitCode(1) }
    }
}
