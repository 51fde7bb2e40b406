import ArgumentParser
import ReceiptCore
import ReceiptServer

/// `receipt serve`'s app: what receipts, JWS and notifications must name, and its shared secrets.
struct ServeAppOptions: ParsableArguments {
    @Option(help: "A bundle id receipts and JWS must name (repeatable: any of them); not checked when omitted.")
    var bundleId: [String] = []

    @Option(help: "The environment /v1/verify requires (production, sandbox, xcode, local-testing); any when omitted. The verifyReceipt endpoints judge the environment themselves (21007, 21008).")
    var environment: ReceiptEnvironment?

    @Option(help: "The app's Apple id a JWS that names one must name (/v1/verify).")
    var appAppleId: Int64?

    @Option(help: "An app's shared secret for /verifyReceipt (repeatable): a receipt with auto-renewable purchases then needs one of them, or gets 21004.")
    var password: [String] = []

    @Option(help: "A file of shared secrets, one per line (blank lines ignored): as --password, without the secret showing in the process list.")
    var passwordFile: String?

    /// What the server's verifier requires.
    var policy: VerificationPolicy {
        var policy = VerificationPolicy(bundleID: bundleId.first, environment: environment, appAppleID: appAppleId)
        policy.otherBundleIDs = Array(bundleId.dropFirst())
        return policy
    }

    func configure(_ settings: inout ServerSettings) throws(ReceiptError) {
        settings.sharedSecrets = password + (try passwordFile.map { (path) throws(ReceiptError) in
            try ServeCredentialOptions.secrets(inFile: path, option: "--password-file")
        } ?? [])
    }
}
