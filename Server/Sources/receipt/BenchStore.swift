import ArgumentParser
import Logging
import ReceiptCore
import ReceiptServer

/// `receipt bench-store`: the in-process half of the store rows of `make bench`
/// (bench/bench_store.py adds HTTP): timings from ReceiptServer.StoreBench.
struct BenchStore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-store",
        abstract: "Time what receipt serve does in-process for a store read (medians, in nanoseconds).",
        discussion: """
            subscription_read: GET /v1/subscriptions/ID without HTTP (one store read, the state, the JSON). \
            verify_receipt_merged: one /verifyReceipt body answered with what the store knows (verdict, one \
            store read, the merged answer). Prints one JSON object.
            """)

    @OptionGroup var store: StoreLocationOptions

    @Option(help: "The original transaction id to read.")
    var subscription: String

    @Option(help: "A verifyReceipt request body (JSON) to answer merged.")
    var verifyReceiptBody: String?

    @OptionGroup var trust: TrustOptionGroup

    @Option(help: "Samples per figure; each times 16 tasks making --calls calls each.")
    var samples = 7

    @Option(help: "Calls by each of the 16 tasks in a sample (fewer for a count under valgrind).")
    var calls = 200

    func run() async throws {
        let (verifier, body, location): (ReceiptVerifier, [UInt8]?, StoreLocation)
        do throws(ReceiptError) {
            location = try store.location()
            verifier = try trust.verifier(policy: VerificationPolicy())
            body = try verifyReceiptBody.map { (path) throws(ReceiptError) in try InputFile.read(path) }
        } catch {
            throw failOption(error)
        }
        let figures = try await StoreBench.run(location: location, verifier: verifier, originalTransactionID: subscription,
                                               verifyReceiptBody: body, samples: samples, calls: calls,
                                               logger: Logger(label: "receipt.bench"))
        print("{" + figures.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}")
    }
}
