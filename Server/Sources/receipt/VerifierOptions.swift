import ArgumentParser
@_spi(ReceiptInternal) import ReceiptCore

/// The trust and policy options every verifying subcommand shares.
struct VerifierOptions: ParsableArguments {
    @Option(help: "The expected bundle id (not checked when omitted).")
    var bundleId: String?

    @Option(help: "The expected application version (not checked when omitted).")
    var appVersion: String?

    @Option(help: "The device identifier in hex: 16 bytes (iOS identifierForVendor) or 6 (macOS en0 MAC).")
    var deviceId: String?

    @OptionGroup var trust: TrustOptionGroup

    @Option(help: "The instant the VPP expiration is checked against, and a JWS without signedDate is judged at (RFC 3339, e.g. 2024-01-01T00:00:00Z or 2024-01-01T01:00:00+01:00).")
    var now: String?

    @Option(help: "Require the environment: production (receipts Production, ProductionVPP; JWS Production), sandbox (ProductionSandbox, ProductionVPPSandbox; Sandbox), xcode (Xcode) or local-testing (JWS LocalTesting). Any when omitted.")
    var environment: ReceiptEnvironment?

    @Option(help: "The app's Apple id a JWS that names one must name (notifications, AppTransactions); required for production ones.")
    var appAppleId: Int64?

    @Option(help: "Check the OCSP status of a JWS's App Store chain: off (the default), soft (revoked fails; no answer passes with a warning) or hard (only a good answer passes).")
    var revocation: RevocationMode = .off

    @Option(help: "Seconds to wait for each OCSP answer (with --revocation).")
    var ocspTimeout: Double = 5

    /// The verifier these options describe; a bad option exits 2, naming the option.
    func verifier() throws -> ReceiptVerifier {
        do throws(ReceiptError) {
            return try makeVerifier()
        } catch {
            throw failOption(error)
        }
    }

    private func makeVerifier() throws(ReceiptError) -> ReceiptVerifier {
        var policy = VerificationPolicy(bundleID: bundleId, applicationVersion: appVersion)
        if let deviceId {
            guard let bytes = hexBytes(deviceId) else {
                throw ReceiptError(.invalidArgument, "--device-id is not hex: \(deviceId)")
            }
            policy.deviceIdentifier = bytes
        }
        policy.environment = environment
        policy.appAppleID = appAppleId
        policy.revocation = revocation
        if let now { policy.nowMilliseconds = try CommandLineValues.instant(now, option: "--now") }
        return try trust.verifier(policy: policy)
    }
}

/// What to trust: every verifying subcommand's, and `serve`'s.
struct TrustOptionGroup: ParsableArguments {
    @Flag(help: "Also trust Xcode's StoreKit Testing certificate.")
    var allowXcode = false

    @Flag(help: "Do not trust Apple's roots (the Apple Inc. Root CA for receipts, Apple Root CA - G3 for JWS); use with --allow-xcode or --anchor.")
    var noAppleRoot = false

    @Option(help: "Trust this certificate (DER or PEM) as well; repeatable.")
    var anchor: [String] = []

    /// A verifier with this trust and `policy`; an unreadable --anchor names its file.
    func verifier(policy: VerificationPolicy) throws(ReceiptError) -> ReceiptVerifier {
        guard !noAppleRoot || allowXcode || !anchor.isEmpty else {
            throw ReceiptError(.invalidArgument, "--no-apple-root leaves nothing to trust: add --anchor CERT or --allow-xcode")
        }
        let anchors = try anchor.map { (path) throws(ReceiptError) in try optionFile("--anchor", path, TrustAnchor.init) }
        var trust: TrustOptions = noAppleRoot ? [] : .appleRoot
        if allowXcode { trust.insert(.xcodeStoreKit) }
        return ReceiptVerifier(trust: trust, anchors: anchors, policy: policy)
    }
}

extension ReceiptEnvironment: ExpressibleByArgument {}
extension RevocationMode: ExpressibleByArgument {}

extension VerifierOptions {
    /// With revocation on, asks OCSP what the JWS's chain still needs and gives the
    /// answers to the verifier (which checks and caches them); a responder that does
    /// not answer leaves the step without a fresh answer, and its mode decides.
    func askRevocation(_ verifier: ReceiptVerifier, about payload: SignedPayload) {
        guard revocation != .off, let queries = try? verifier.revocationQueries(for: payload) else { return }
        for query in queries {
            switch HTTPPost.send(query.request, to: query.url, contentType: "application/ocsp-request", timeout: ocspTimeout) {
            case .success(let (status, body)):
                do throws(ReceiptError) {
                    try verifier.acceptRevocationAnswer(query, httpStatus: status, body: body)
                } catch {
                    printToStandardError("receipt: OCSP for \(query.subject): \(error)")
                }
            case .failure(let failure):
                printToStandardError("receipt: OCSP for \(query.subject): \(failure.description)")
            }
        }
    }
}

enum CommandLineValues {
    static func instant(_ text: String, option: String) throws(ReceiptError) -> Int64 {
        guard let milliseconds = ReceiptDateText.epochMilliseconds(text) else {
            throw ReceiptError(.invalidArgument, "\(option) is not an RFC 3339 instant like 2024-01-01T00:00:00Z or 2024-01-01T01:00:00+01:00: \(text)")
        }
        return milliseconds
    }
}
