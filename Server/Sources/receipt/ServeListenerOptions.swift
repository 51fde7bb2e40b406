import ArgumentParser
import ReceiptCore
import ReceiptServer

/// `receipt serve`'s listener: where it listens, and what one connection or request may take.
struct ServeListenerOptions: ParsableArguments {
    @Option(help: "The address to listen on.")
    var host = ServerSettings.Defaults.host

    @Option(help: "The port to listen on; 0 lets the system choose.")
    var port = ServerSettings.Defaults.port

    @Option(help: "The largest request body in bytes; past it /verifyReceipt answers 21002 and /v1/verify 413.")
    var maxBody = ServerSettings.Defaults.maxBodyBytes

    @Option(help: "Event-loop threads (default: the number of cores).")
    var workers: Int?

    @Option(help: "Connections served at once; past it new ones wait in the listen queue.")
    var maxConnections = ServerSettings.Defaults.maxConnections

    @Option(help: "Seconds a whole request may take to arrive, from the connection's opening or its previous response; then the connection is closed.")
    var requestTimeout = ServerSettings.Defaults.requestTimeoutSeconds

    @Option(help: "The path App Store Server Notifications V2 are posted to (the URL set in App Store Connect).")
    var notificationsPath = ServerSettings.Defaults.notificationsPath

    func configure(_ settings: inout ServerSettings) {
        settings.host = host
        settings.port = port
        settings.maxBodyBytes = maxBody
        settings.workers = workers ?? ServerSettings.coreCount
        settings.maxConnections = maxConnections
        settings.requestTimeoutSeconds = requestTimeout
        settings.notificationsPath = notificationsPath
    }
}
