import ArgumentParser
import Foundation
import ReceiptCore
import ReceiptServer

/// `receipt serve`'s App Store Server API: the key that looks up subscriptions no notification
/// told of, signs offers and sends consumption answers, and how often it may be used.
struct ServeAPIOptions: ParsableArguments {
    @Option(help: "The App Store Server API in-app purchase key (.p8): with it and a --store, GET /v1/subscriptions/{id} looks up a subscription no notification told of. Default $APPSTORE_PRIVATE_KEY_FILE; the key id, issuer id and bundle id come from the options below, $APPSTORE_KEY_ID, $APPSTORE_ISSUER_ID, and --bundle-id or $APPSTORE_BUNDLE_ID.")
    var apiPrivateKeyFile: String?

    @Option(help: "The App Store Server API key's id; default $APPSTORE_KEY_ID.")
    var apiKeyId: String?

    @Option(help: "The App Store Server API issuer id; default $APPSTORE_ISSUER_ID.")
    var apiIssuerId: String?

    @Option(help: "The App Store Server API's environment (production, sandbox, local-testing); default --environment, else production.")
    var apiEnvironment: ReceiptEnvironment?

    @Option(help: "Send App Store Server API calls to this URL instead of Apple's host (a mock, a proxy).")
    var apiBaseUrl: String?

    @Flag(help: "For a production App Store Server API: a look-up production does not know (its TRANSACTION_ID_NOT_FOUND) is asked of the sandbox, whose answer must verify as Sandbox, and stored beside production's rows (App Review buys in the sandbox against production servers). A look-up then counts four calls in --api-calls-per-minute.")
    var apiSandboxFallback = false

    @Option(help: "Send --api-sandbox-fallback's calls to this URL instead of Apple's sandbox host (a mock, a proxy).")
    var apiSandboxBaseUrl: String?

    @Option(help: "App Store Server API calls that look-ups of unknown subscriptions may make in any minute (a look-up is at least two).")
    var apiCallsPerMinute = ServerSettings.Defaults.lookupCallsPerMinute

    /// The clients, with the server's verifier; `app` names the bundle id and the environment they default to.
    func configure(_ settings: inout ServerSettings, app: ServeAppOptions) throws(ReceiptError) {
        settings.lookupCallsPerMinute = apiCallsPerMinute
        guard apiPrivateKeyFile != nil || ProcessInfo.processInfo.environment["APPSTORE_PRIVATE_KEY_FILE"] != nil else {
            guard !apiSandboxFallback, apiSandboxBaseUrl == nil else {
                throw ReceiptError(.invalidArgument, "--api-sandbox-fallback needs App Store Server API credentials (--api-private-key-file)")
            }
            return
        }
        let keys = try APICredentialOptions.credentials(issuerID: apiIssuerId, keyID: apiKeyId, keyFile: apiPrivateKeyFile,
                                                        bundleID: app.bundleId.first, flagPrefix: "--api-")
        settings.serverAPI = try ServerAPIClient(credentials: keys, environment: apiEnvironment ?? app.environment ?? .production,
                                                 baseURL: apiBaseUrl, verifier: settings.verifier)
        settings.serverAPISandboxFallback = try sandboxFallbackClient(keys, verifier: settings.verifier)
    }

    /// --api-sandbox-fallback's client: the same key, Apple's sandbox (or --api-sandbox-base-url),
    /// and the server's verifier requiring the sandbox. Nil without the flag.
    private func sandboxFallbackClient(_ keys: ServerAPICredentials, verifier: ReceiptVerifier) throws(ReceiptError) -> ServerAPIClient? {
        guard apiSandboxFallback else {
            guard apiSandboxBaseUrl == nil else {
                throw ReceiptError(.invalidArgument, "--api-sandbox-base-url needs --api-sandbox-fallback")
            }
            return nil
        }
        var policy = verifier.policy
        policy.environment = .sandbox
        return try ServerAPIClient(credentials: keys, environment: .sandbox, baseURL: apiSandboxBaseUrl,
                                   verifier: verifier.with(policy: policy))
    }
}
