import ArgumentParser
import ReceiptCore
import ReceiptServer

/// `receipt serve`'s revocation checks: OCSP for JWS chains, and how its answers are kept fresh.
struct ServeRevocationOptions: ParsableArguments {
    @Option(help: "OCSP for JWS chains on /v1/verify: off (the default), soft (revoked fails; no answer passes with a warning) or hard (only good passes). Answers are cached and asked again before they expire.")
    var revocation: RevocationMode = .off

    @Option(help: "Seconds to wait for an OCSP answer.")
    var ocspTimeout = ServerSettings.Defaults.ocspTimeoutSeconds

    @Option(help: "Seconds between looks for cached OCSP answers about to expire.")
    var ocspRefreshInterval = ServerSettings.Defaults.ocspRefreshIntervalSeconds

    @Option(help: "Ask OCSP again this many seconds before a cached answer expires.")
    var ocspRefreshBefore = ServerSettings.Defaults.ocspRefreshBeforeSeconds

    func configure(_ settings: inout ServerSettings) {
        settings.ocspTimeoutSeconds = ocspTimeout
        settings.ocspRefreshIntervalSeconds = ocspRefreshInterval
        settings.ocspRefreshBeforeSeconds = Int64(ocspRefreshBefore)
    }
}
