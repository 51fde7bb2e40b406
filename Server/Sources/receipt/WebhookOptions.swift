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
    var webhookRetryPeriod = 259_200

    @Option(help: "Milliseconds before a failed delivery's first retry; each next waits twice as long (at most an hour), less up to half at random.")
    var webhookInitialBackoffMs = 5_000

    @Option(help: "Seconds one delivery attempt may take, the receiver's whole answer included.")
    var webhookTimeout = 10

    @Option(help: "Days an event is kept once no delivery waits on it (deliveries still pending are kept however old); the server deletes older ones at start and every hour. 0 keeps every event.")
    var eventRetentionDays = 30

    func configure(_ settings: inout ServerSettings) throws(ReceiptError) {
        guard (0...36_500).contains(eventRetentionDays) else {
            throw ReceiptError(.invalidArgument, "--event-retention-days is 0 (keep every event) to 36500")
        }
        settings.eventRetentionDays = eventRetentionDays
        guard !urls.isEmpty || !secretFiles.isEmpty else { return }
        guard settings.store != nil else { throw ReceiptError(.invalidArgument, "--webhook delivers the store's events: give --store") }
        guard urls.count == secretFiles.count else {
            throw ReceiptError(.invalidArgument, "each --webhook needs its --webhook-secret-file (\(urls.count) URLs, "
                               + "\(secretFiles.count) secret files)")
        }
        guard Set(urls).count == urls.count else { throw ReceiptError(.invalidArgument, "a --webhook URL is given twice") }
        guard webhookRetryPeriod > 0, webhookInitialBackoffMs > 0, webhookTimeout > 0 else {
            throw ReceiptError(.invalidArgument, "--webhook-retry-period, --webhook-initial-backoff-ms and --webhook-timeout must be positive")
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
        settings.webhookPolicy.retryPeriodMilliseconds = Int64(webhookRetryPeriod) * 1000
        settings.webhookPolicy.retry.initialBackoffMilliseconds = Int64(webhookInitialBackoffMs)
        settings.webhookPolicy.timeoutSeconds = Int64(webhookTimeout)
    }
}
