import ReceiptCore

extension ServerSettings {
    /// The settings a server runs with, defaults included, as `receipt serve --print-config`
    /// shows them: in the configuration file's keys (docs/serve.md), one `key: value` a line,
    /// and no secret: a token, a shared secret, a key or a webhook's secret shows only as how
    /// many there are.
    public var summaryLines: [String] {
        let policy = verifier.policy
        var lines = [
            "listener.host: \(host)",
            "listener.port: \(port)",
            "listener.max_body_bytes: \(maxBodyBytes)",
            "listener.workers: \(workers)",
            "listener.max_connections: \(maxConnections)",
            "listener.request_timeout_seconds: \(requestTimeoutSeconds)",
            "listener.notifications_path: \(notificationsPath)",
            "store.location: \(store?.description ?? "(none)")",
            "store.event_retention_days: \(eventRetentionDays)",
            "credentials.read_tokens: \(Self.hidden(credentials.readTokens.count))",
            "credentials.write_tokens: \(Self.hidden(credentials.writeTokens.count))",
            "credentials.metrics_tokens: \(Self.hidden(credentials.metricsTokens.count))",
            "credentials.allow_unauthenticated_reads: \(credentials.openReads)",
            "webhook_delivery.retry_period_seconds: \(webhookPolicy.retryPeriodMilliseconds / 1_000)",
            "webhook_delivery.initial_backoff_ms: \(webhookPolicy.retry.initialBackoffMilliseconds)",
            "webhook_delivery.timeout_seconds: \(webhookPolicy.timeoutSeconds)",
            "revocation.mode: \(policy.revocation.rawValue)",
            "revocation.ocsp_timeout_seconds: \(ocspTimeoutSeconds)",
            "revocation.ocsp_refresh_interval_seconds: \(ocspRefreshIntervalSeconds)",
            "revocation.ocsp_refresh_before_seconds: \(ocspRefreshBeforeSeconds)",
            "apps[0].bundle_id: \(policy.expectedBundleIDs.isEmpty ? "(any)" : policy.expectedBundleIDs.joined(separator: ", "))",
            "apps[0].app_apple_id: \(policy.appAppleID.map(String.init) ?? "(any)")",
            "apps[0].environment: \(policy.environment?.rawValue ?? "(any)")",
            "apps[0].shared_secrets: \(Self.hidden(sharedSecrets.count))",
        ]
        if let api = serverAPI {
            lines += [
                "apps[0].api.key_id: \(api.credentials.keyID)",
                "apps[0].api.issuer_id: \(api.credentials.issuerID ?? "(none)")",
                "apps[0].api.private_key: \(Self.hidden(1))",
                "apps[0].api.environment: \(api.environment.rawValue)",
                "apps[0].api.base_url: \(api.baseURL)",
                "apps[0].api.sandbox_fallback: \(serverAPISandboxFallback != nil)",
                "apps[0].api.calls_per_minute: \(lookupCallsPerMinute)",
            ]
        } else {
            lines.append("apps[0].api: (none)")
        }
        lines += webhooks.enumerated().map { "apps[0].webhooks[\($0.offset)]: \($0.element.url) (secret not shown)" }
        lines.append("apps[0].retention: \(retention == nil ? "(none)" : "served at \(retentionPath)")")
        lines.append("apps[0].consumption_policy: \(consumptionPolicy == nil ? "(none)" : "given")")
        lines.append("logs.access_log: \(accessLog)")
        return lines
    }

    private static func hidden(_ count: Int) -> String { count == 0 ? "(none)" : "\(count) (not shown)" }
}
