import ArgumentParser
import ReceiptCore
import ReceiptServer

/// `receipt stats-sql FIGURE`: the SQL `receipt serve` runs for a figure, its arguments
/// written in, for another engine to run on the store's tables (Spark over JDBC,
/// examples/spark/store_figures.py): the same definition, not a copy.
struct StatsSQLCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats-sql",
        abstract: "Print the SQL receipt serve runs for a figure, to run it elsewhere (Spark, psql) on the store's tables.",
        discussion: """
            subscriptions: rows of (product_id, status 1-5 as Apple numbers them, count), as GET \
            /v1/stats/subscriptions counts them. mrr: rows of (currency, standing period in milliseconds, \
            subscriptions, price sum in milliunits) of the active subscriptions, from which GET /v1/stats/mrr \
            makes MRR. The statement reads the tables transactions and renewal_infos. Exit status: 0 printed; \
            2 unusable arguments.
            """)

    @Argument(help: "The figure: subscriptions or mrr.")
    var figure: String

    @Option(help: "The instant: epoch milliseconds or a date (2026-11-27, midnight UTC). Now when omitted.")
    var at: String?

    @Option(help: "Only this product's figures.")
    var product: String?

    func run() async throws {
        let instant: Int64
        if let at {
            guard let parsed = FigureInterval.instant(at) else {
                throw failOption(ReceiptError(.invalidArgument, "--at is " + FigureInterval.instantsText))
            }
            instant = parsed
        } else {
            instant = ReceiptClock.systemNow()
        }
        guard let sql = try await PortableFigureSQL.statement(figure, at: instant, product: product) else {
            throw failOption(ReceiptError(.invalidArgument, "the figures with one statement are "
                                          + PortableFigureSQL.figures.joined(separator: " and ")))
        }
        print(sql)
    }
}
