import ArgumentParser
import Logging
import ReceiptCore
import ReceiptServer

/// `receipt events list|show|replay|prune`: the outbox of a `receipt serve` store (the events
/// made from every change, and their webhook deliveries), as JSON on standard output.
struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "List, show, replay and prune the events a receipt serve store made (and their webhook deliveries).",
        discussion: """
            Prints JSON, as GET /v1/events answers. replay makes deliveries pending again, due now; a running \
            receipt serve with the same --webhook sends them. Exit status: 0 done; 1 no such event; 2 unusable \
            arguments or store.
            """,
        subcommands: [List.self, Show.self, Replay.self, Prune.self])

    struct StoreOptions: ParsableArguments {
        @OptionGroup var store: StoreLocationOptions

        func run(_ operation: ReceiptServer.EventsOperation) async throws -> [UInt8]? {
            let location: StoreLocation
            do throws(ReceiptError) {
                location = try store.location()
            } catch {
                throw failOption(error)
            }
            do {
                return try await ReceiptServer.events(storeLocation: location, operation, logger: Logger(label: "receipt.events"))
            } catch let error as ReceiptServer.StoreOpenError {
                printToStandardError("receipt events: \(error)")
                throw ExitCode(unusableInputExitCode)
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Events, most recent first.")

        @OptionGroup var options: StoreOptions

        @Option(help: "Only events with a delivery in this state: pending, delivered or failed.")
        var state: String?

        @Option(help: "Events before this sequence (a list's next_before).")
        var before: Int64?

        @Option(help: "At most this many events (1 to 1000).")
        var limit = 100

        func run() async throws {
            guard state == nil || ReceiptServer.eventDeliveryStates.contains(state!), (1...ReceiptServer.eventsListLimit).contains(limit) else {
                throw failOption(ReceiptError(.invalidArgument, "--state is pending, delivered or failed; --limit 1 to "
                                              + "\(ReceiptServer.eventsListLimit)"))
            }
            try printJSON(try await options.run(.list(state: state, before: before, limit: limit)))
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One event: its body (the signed JWS in it) and its deliveries.")

        @OptionGroup var options: StoreOptions

        @Argument(help: "The event's id (evt_ and 32 hex digits: the webhook-id its deliveries carried).")
        var id: String

        func run() async throws {
            guard ReceiptServer.isEventID(id) else {
                throw failOption(ReceiptError(.invalidArgument, "an event id is evt_ and 32 hex digits"))
            }
            guard let shown = try await options.run(.show(id: id)) else {
                printToStandardError("receipt events: no event \(id) is stored")
                throw ExitCode(1)
            }
            try printJSON(shown)
        }
    }

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Send an event again (or, with --failed, every failed delivery).")

        @OptionGroup var options: StoreOptions

        @Argument(help: "The event's id.")
        var id: String?

        @Flag(help: "Every delivery parked as failed.")
        var failed = false

        @Flag(help: "Send the event again even where it was delivered (at most 3 times an event).")
        var force = false

        func run() async throws {
            guard (id == nil) == failed, id.map(ReceiptServer.isEventID) ?? true, !(force && failed) else {
                throw failOption(ReceiptError(.invalidArgument, "give an event id (evt_ and 32 hex digits), with --force if it "
                                              + "was delivered, or --failed"))
            }
            try printJSON(try await options.run(.replay(id: id, force: force)))
        }
    }
}

extension EventsCommand {
    struct Prune: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete the events older than some days that no delivery waits on (receipt serve does it hourly).")

        @OptionGroup var options: StoreOptions

        @Option(help: "Delete events made more than this many days ago (1 to 36500); pending deliveries are kept.")
        var olderThanDays: Int

        func run() async throws {
            guard (1...36_500).contains(olderThanDays) else {
                throw failOption(ReceiptError(.invalidArgument, "--older-than-days is 1 to 36500"))
            }
            try printJSON(try await options.run(.prune(olderThanDays: olderThanDays)))
        }
    }
}

private func printJSON(_ bytes: [UInt8]?) throws {
    print(String(decoding: bytes ?? [], as: UTF8.self))
}
