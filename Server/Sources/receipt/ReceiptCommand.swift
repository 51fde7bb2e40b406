import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import ReceiptCore
import ReceiptServer

@main
struct ReceiptCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receipt",
        abstract: "Parse and verify App Store receipts.",
        discussion: """
            Exit status, the same for every subcommand: 0 success; 1 a verdict or a refusal (the \
            receipt or JWS did not verify: verify, entitlements; the App Store or the App Store \
            Server API said no: appstore-verify, api, sync; bench: the input does not verify); 2 \
            unusable input, arguments, files or store (the status name and detail go to stderr; \
            serve exits 2 for anything it cannot start with); 3 no usable answer from Apple, or \
            one that may pass later (appstore-verify, api, sync: run again).
            """,
        version: ServerBuild.description,
        subcommands: [Inspect.self, Verify.self, EntitlementsCommand.self, AppStoreVerify.self, APICommand.self, EventsCommand.self,
                      OfferCommand.self, Serve.self, StatsSQLCommand.self, AuditCommand.self, SyncCommand.self, ImportCommand.self, Bench.self, BenchStore.self, BenchRoutes.self]
    )

    /// As ArgumentParser's, except that a usage error (unknown flag, missing
    /// argument, bad value) exits 2 as documented, not EX_USAGE (64).
    static func main() async {
        // No subcommand is a usage error: the usage goes to stderr, exit 2 (not help on stdout, exit 0).
        if CommandLine.arguments.count <= 1 {
            printToStandardError(helpMessage())
            exit(withError: ExitCode(unusableInputExitCode))
        }
        do {
            var command = try parseAsRoot()
            // Still on the main thread with no task started: the only moment the server's
            // event loops can take over Swift's global executor (and the allocator is set
            // before any thread allocates).
            (command as? Serve)?.prepareProcess()
            if var server = command as? AsyncParsableCommand {
                try await server.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                printToStandardError(fullMessage(for: error))
                exit(withError: ExitCode(unusableInputExitCode))
            }
            exit(withError: error)
        }
    }
}

/// Exit code 2: the input or the arguments could not be used.
let unusableInputExitCode: Int32 = 2

/// Prints a failure of the receipt `file` the way every subcommand does and exits 2.
func fail(_ error: ReceiptError, file: String) -> ExitCode {
    printToStandardError("receipt: \(file): \(error)")
    return ExitCode(unusableInputExitCode)
}

/// Prints a failure of an option (its value, or a file it names, which the detail
/// gives) and exits 2: the receipt is not at fault, so it is not named.
func failOption(_ error: ReceiptError) -> ExitCode {
    printToStandardError("receipt: \(error)")
    return ExitCode(unusableInputExitCode)
}

/// `optionFile` for a file that holds a secret (a token, a password, a key): refused, as ssh
/// refuses a key, when its group or others may read or write it, naming the fix.
func secretFile<T>(_ option: String, _ path: String,
                   _ use: ([UInt8]) throws(ReceiptError) -> T) throws(ReceiptError) -> T {
    var status = stat()
    if stat(path, &status) == 0, status.st_mode & 0o077 != 0 {
        throw ReceiptError(.invalidArgument, "\(option) \(path): holds a secret but its group or others may read it (mode "
                           + "\(String(status.st_mode & 0o777, radix: 8))); make it the owner's alone: chmod 600 \(path)")
    }
    return try optionFile(option, path, use)
}

/// Reads a file an option names (--anchor, --catalog), naming it in any error.
func optionFile<T>(_ option: String, _ path: String,
                   _ use: ([UInt8]) throws(ReceiptError) -> T) throws(ReceiptError) -> T {
    do throws(ReceiptError) {
        return try use(try InputFile.read(path))
    } catch {
        throw ReceiptError(error.status, at: error.offset, "\(option) \(path): \(error.detail)")
    }
}

/// Refuses an option given twice unless it is `repeatable`: ArgumentParser keeps the last
/// value of `--environment sandbox --environment production`, which is seldom what was meant.
func refuseRepeatedOptions(_ arguments: some Sequence<String>, repeatable: Set<String>) throws(ReceiptError) {
    var seen: Set<String> = []
    for name in optionNames(arguments) where !repeatable.contains(name) {
        guard seen.insert(name).inserted else {
            throw ReceiptError(.invalidArgument, "\(name) is given twice; it takes one value")
        }
    }
}

/// The long options among `arguments`, in order, each by its name (`--port=1` is `--port`), up to a `--`.
func optionNames(_ arguments: some Sequence<String>) -> [String] {
    var names: [String] = []
    for argument in arguments {
        if argument == "--" { break }
        guard argument.hasPrefix("--") else { continue }
        names.append(String(argument.split(separator: "=", maxSplits: 1).first ?? Substring(argument)))
    }
    return names
}

