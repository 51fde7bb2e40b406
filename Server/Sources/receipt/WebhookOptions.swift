import ArgumentParser
import ReceiptCore
import ReceiptServer

/// `receipt serve`'s webhooks: where the store's events go, signed as Standard Webhooks
/// says, and how failing deliveries are retried.
struct WebhookOptions: ParsableArguments {
    @Option(name: .customLong("webhook"), help: "Deliver every event the store makes to this URL (repeatable; https, or http to a loopback host), signed as the Standard Webhooks specification says. Each needs a --webhook-secret-file, in the same order. Needs a --store.")
    var urls: [String] = []

    @Option(name: .customLong("webhook-secret-file"), help: "A file holding a webhook's secret, whsec_ followed by base64 (repeatable; the n-th is the n-th --webhook's).")
    var secretFiles: [String] = []

    @Option(help: "Seconds a failing delivery is retried (timeouts, connection errors, 408, 429, 5xx) before it is parked as failed.")
    var webhookRetryPeriod = Int(ServerSettings.Defaults.webhookPolicy.retryPeriodMilliseconds / 1000)

    @Option(help: "Milliseconds before a failed delivery's first retry; each next waits twice as long (at most an hour), less up to half at random.")
    var webhookInitialBackoffMs = Int(ServerSettings.Defaults.webhookPolicy.retry.initialBackoffMilliseconds)

    @Option(help: "Seconds one delivery attempt may take, the receiver's whole answer included.")
    var webhookTimeout = Int(ServerSettings.Defaults.webhookPolicy.timeoutSeconds)

    @Option(help: "Days an event is kept once no delivery waits on it (deliveries still pending are kept however old); the server deletes older ones at start and every hour. 0 keeps every event.")
    var eventRetentionDays = ServerSettings.Defaults.eventRetentionDays

    func configure(_ settings: inout ServerSettings) throws(ReceiptError) {
        settings.eventRetentionDays = eventRetentionDays
        guard !urls.isEmpty || !secretFiles.isEmpty else { return }
        guard urls.count == secretFiles.count else {
            throw ReceiptError(.invalidArgument, "each --webhook needs its --webhook-secret-file (\(urls.count) URLs, "
                               + "\(secretFiles.count) secret files)")
        }
        for (url, file) in zip(urls, secretFiles) {
            let secret = try secretFile("--webhook-secret-file", file) { (bytes) throws(ReceiptError) in
                try StandardWebhook.Secret(String(decoding: bytes, as: UTF8.self))
            }
            do throws(ReceiptError) {
                settings.webhooks.append(try WebhookEndpoint(url: url, secret: secret))
            } catch {
                throw ReceiptError(error.status, "--webhook: \(error.detail)")
            }
        }
        let period = Int64(webhookRetryPeriod).multipliedReportingOverflow(by: 1000)
        settings.webhookPolicy.retryPeriodMilliseconds = period.overflow ? (webhookRetryPeriod < 0 ? -1 : .max) : period.partialValue
        settings.webhookPolicy.retry.initialBackoffMilliseconds = Int64(webhookInitialBackoffMs)
        settings.webhookPolicy.timeoutSeconds = Int64(webhookTimeout)
    }
}
