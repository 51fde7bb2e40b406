import ArgumentParser
import ReceiptCore
import ReceiptServer

/// `receipt serve`'s Retention Messaging: the rules it answers Apple's realtime requests with, and where.
struct ServeRetentionOptions: ParsableArguments {
    @Option(help: "Retention Messaging: a rules file (JSON; docs/serve.md, 'Retention Messaging (realtime)') with which the server answers Apple's realtime requests at --retention-path. Promotional offers in it are signed with the App Store Server API key (--api-private-key-file).")
    var retentionRules: String?

    @Option(help: "The path Apple posts Retention Messaging realtime requests to (the realtime URL given with receipt api configure_realtime_url).")
    var retentionPath = ServerSettings.Defaults.retentionPath

    /// The realtime endpoint, verifying with the server's verifier and signing offers with the
    /// App Store Server API key (configured before) when the rules offer any.
    func configure(_ settings: inout ServerSettings) throws(ReceiptError) {
        guard let retentionRules else { return }
        settings.retentionPath = retentionPath
        let rules = try optionFile("--retention-rules", retentionRules) { (bytes) throws(ReceiptError) in
            try RetentionRules(json: bytes)
        }
        do throws(ReceiptError) {
            settings.retention = try RetentionEndpoint(verifier: settings.verifier, rules: rules,
                                                       offerCredentials: settings.serverAPI?.credentials)
        } catch {
            throw ReceiptError(error.status, "--retention-rules \(retentionRules): \(error.detail) (--api-private-key-file)")
        }
    }
}
