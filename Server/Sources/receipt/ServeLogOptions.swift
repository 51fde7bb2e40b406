import ArgumentParser
import Logging
import ReceiptServer

/// `receipt serve`'s logs, on standard error.
struct ServeLogOptions: ParsableArguments {
    @Flag(help: "Log every refused request's reason (why a body got 21002) on standard error (--log-level debug).")
    var verbose = false

    @Option(help: "The log's form on standard error: text (a line per event) or json (an object per line, for log collectors).")
    var logFormat: LogFormat = .text

    @Option(help: "The least severe log level written: trace, debug, info, notice, warning, error or critical (default info; --verbose is debug).")
    var logLevel: Logger.Level?

    @Flag(help: "Log one line per request (method, path without its query, status, milliseconds) at info.")
    var accessLog = false

    /// The process's logger, its handler set up as these options say.
    func logger() -> Logger {
        let json = logFormat == .json
        LoggingSystem.bootstrap { label -> any LogHandler in
            json ? JSONLogHandler(label: label) : StreamLogHandler.standardError(label: label)
        }
        var logger = Logger(label: "receipt.serve")
        logger.logLevel = logLevel ?? (verbose ? .debug : .info)
        return logger
    }
}

/// `--log-format`.
enum LogFormat: String, ExpressibleByArgument {
    case text, json
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
