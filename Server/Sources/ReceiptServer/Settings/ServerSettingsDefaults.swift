import ReceiptCore

extension ServerSettings {
    /// Every default of `receipt serve`: the settings start from these, and the CLI's flags
    /// show them. One place, so that a flag and a configuration file cannot disagree.
    public enum Defaults {
        public static let host = "127.0.0.1"
        public static let port = 8080
        public static let maxBodyBytes = 8 << 20
        public static let maxConnections = 4096
        public static let requestTimeoutSeconds = 30
        public static let ocspTimeoutSeconds = 5
        public static let ocspRefreshIntervalSeconds = 30
        public static let ocspRefreshBeforeSeconds = 600
        public static let storeTimeoutSeconds = 15
        public static let storeOperationTimeoutSeconds = 5
        public static let notificationsPath = "/notifications/v2"
        public static let retentionPath = "/retention/realtime"
        public static let eventRetentionDays = 30
        public static let lookupCallsPerMinute = 60
        /// Webhook deliveries' pacing: WebhookPolicy's own defaults (and RetryPolicy's).
        public static let webhookPolicy = WebhookPolicy()
    }
}
