import ArgumentParser
import ReceiptServer

/// `receipt bench-routes`: the route table beside Hummingbird's Router (ReceiptServer.RouteBench),
/// for `make bench` and docs/performance.md.
struct BenchRoutes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-routes",
        abstract: "Time finding a request's route: receipt serve's table beside Hummingbird's Router (medians, in nanoseconds).",
        discussion: """
            Both hold every route of receipt serve and answer a mix of requests with an empty response, in-process \
            and one at a time. Prints one JSON object: table, router (nanoseconds per request) and their ratio.
            """)

    @Option(help: "Samples per figure; each routes 20,000 requests.")
    var samples = 7

    func run() async throws {
        let figures = Dictionary(uniqueKeysWithValues: try await RouteBench.run(samples: samples))
        let (table, router) = (figures["table"] ?? 0, figures["router"] ?? 0)
        let ratio = table > 0 ? Double(router) / Double(table) : 0
        print("{\"table_ns\": \(table), \"router_ns\": \(router), \"router_over_table\": \((ratio * 100).rounded() / 100)}")
    }
}
