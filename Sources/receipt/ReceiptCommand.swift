import ArgumentParser
import ReceiptCore

@main
struct ReceiptCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receipt",
        abstract: "Parse and verify App Store receipts.",
        discussion: """
            Exit status: 0 success; 1 the receipt did not verify (verify, entitlements) or the \
            App Store refused it (appstore-verify); 2 unusable input or arguments (the status \
            name and detail go to stderr); 3 no usable answer from the App Store (appstore-verify).
            """,
        subcommands: [Inspect.self, Verify.self, EntitlementsCommand.self, AppStoreVerify.self, Bench.self]
    )
}

/// Exit code 2: the input or the arguments could not be used.
let unusableInputExitCode: Int32 = 2

/// Prints a failure the way every subcommand does and exits 2.
func fail(_ error: ReceiptError, file: String) -> ExitCode {
    printToStandardError("receipt: \(file): \(error)")
    return ExitCode(unusableInputExitCode)
}
