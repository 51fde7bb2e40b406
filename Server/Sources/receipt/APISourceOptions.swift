import ArgumentParser
import ReceiptCore

/// The App Store Server API a store is filled from (`receipt sync`, `receipt import`): the
/// credentials, the environment and host, and the trust its answers are verified with.
struct APISourceOptions: ParsableArguments {
    @OptionGroup var credentials: APICredentialOptions

    @Option(help: "production, sandbox or local-testing (needs --base-url).")
    var environment: ReceiptEnvironment = .production

    @Option(help: "Send to this URL instead of Apple's host (a mock, a proxy).")
    var baseUrl: String?

    @OptionGroup var trust: TrustOptionGroup

    @Option(help: "The app's Apple id, which production answers and notifications must name.")
    var appAppleId: Int64?

    /// The client, whose answers verify for the app and environment named, or else are refused.
    func client() throws(ReceiptError) -> ServerAPIClient {
        let keys = try credentials.credentials()
        let verifier = try trust.verifier(policy: VerificationPolicy(bundleID: keys.bundleID, environment: environment,
                                                                     appAppleID: appAppleId))
        return try ServerAPIClient(credentials: keys, environment: environment, baseURL: baseUrl, verifier: verifier)
    }
}
