/// The keys of `receipt serve --config`'s file, each the flag whose setting it makes: a file
/// and the flags make the same ServerSettings, judged by the same rules. docs/serve.md
/// documents each key; `dist/receipt.yaml` is an example.
indirect enum ServeConfigShape: Sendable {
    /// A mapping of these keys; the keys in `required` must be there.
    case mapping([String: ServeConfigShape], required: Set<String> = [])
    /// A list whose every item has this shape, at most `most` items.
    case list(ServeConfigShape, most: Int)
    /// One value given to `flag`.
    case value(ServeConfigValue, flag: String)

    enum Kind: Equatable, Sendable {
        case text, integer
        /// true gives the flag (false: nothing); `inverted`: false gives it.
        case boolean(inverted: Bool)
        /// A file that must be readable now; relative to the configuration file's folder.
        case file
        /// A path (a file created if absent) or a postgres:// URL.
        case location
    }
}

struct ServeConfigValue: Sendable {
    let kind: ServeConfigShape.Kind
    /// A list of such values, each given to the flag in turn.
    let many: Bool

    static let text = ServeConfigValue(kind: .text, many: false)
    static let integer = ServeConfigValue(kind: .integer, many: false)
    static let boolean = ServeConfigValue(kind: .boolean(inverted: false), many: false)
    static let file = ServeConfigValue(kind: .file, many: false)
    static let files = ServeConfigValue(kind: .file, many: true)
}

extension ServeConfigShape {
    /// One app for now: a server holds one app in one environment (docs/serve.md).
    static let maxApps = 1

    static let file: ServeConfigShape = .mapping([
        "listener": .mapping([
            "host": .value(.text, flag: "--host"),
            "port": .value(.integer, flag: "--port"),
            "max_body_bytes": .value(.integer, flag: "--max-body"),
            "workers": .value(.integer, flag: "--workers"),
            "max_connections": .value(.integer, flag: "--max-connections"),
            "request_timeout_seconds": .value(.integer, flag: "--request-timeout"),
            "notifications_path": .value(.text, flag: "--notifications-path"),
        ]),
        "trust": .mapping([
            "allow_xcode": .value(.boolean, flag: "--allow-xcode"),
            "apple_roots": .value(ServeConfigValue(kind: .boolean(inverted: true), many: false), flag: "--no-apple-root"),
            "anchor_files": .value(.files, flag: "--anchor"),
        ]),
        "store": .mapping([
            "location": .value(ServeConfigValue(kind: .location, many: false), flag: "--store"),
            "password_file": .value(.file, flag: "--store-password-file"),
            "event_retention_days": .value(.integer, flag: "--event-retention-days"),
        ], required: ["location"]),
        "credentials": .mapping([
            "read_token_file": .value(.file, flag: "--read-token-file"),
            "write_token_file": .value(.file, flag: "--write-token-file"),
            "metrics_token_file": .value(.file, flag: "--metrics-token-file"),
            "allow_unauthenticated_reads": .value(.boolean, flag: "--allow-unauthenticated-reads"),
        ]),
        "webhook_delivery": .mapping([
            "retry_period_seconds": .value(.integer, flag: "--webhook-retry-period"),
            "initial_backoff_ms": .value(.integer, flag: "--webhook-initial-backoff-ms"),
            "timeout_seconds": .value(.integer, flag: "--webhook-timeout"),
        ]),
        "revocation": .mapping([
            "mode": .value(.text, flag: "--revocation"),
            "ocsp_timeout_seconds": .value(.integer, flag: "--ocsp-timeout"),
            "ocsp_refresh_interval_seconds": .value(.integer, flag: "--ocsp-refresh-interval"),
            "ocsp_refresh_before_seconds": .value(.integer, flag: "--ocsp-refresh-before"),
        ]),
        "logs": .mapping([
            "level": .value(.text, flag: "--log-level"),
            "format": .value(.text, flag: "--log-format"),
            "access_log": .value(.boolean, flag: "--access-log"),
        ]),
        "apps": .list(app, most: maxApps),
    ])

    static let app: ServeConfigShape = .mapping([
        "bundle_id": .value(.text, flag: "--bundle-id"),
        "app_apple_id": .value(.integer, flag: "--app-apple-id"),
        "environment": .value(.text, flag: "--environment"),
        "shared_secrets_file": .value(.file, flag: "--password-file"),
        "api": .mapping([
            "private_key_file": .value(.file, flag: "--api-private-key-file"),
            "key_id": .value(.text, flag: "--api-key-id"),
            "issuer_id": .value(.text, flag: "--api-issuer-id"),
            "environment": .value(.text, flag: "--api-environment"),
            "base_url": .value(.text, flag: "--api-base-url"),
            "sandbox_fallback": .value(.boolean, flag: "--api-sandbox-fallback"),
            "sandbox_base_url": .value(.text, flag: "--api-sandbox-base-url"),
            "calls_per_minute": .value(.integer, flag: "--api-calls-per-minute"),
        ], required: ["private_key_file", "key_id", "issuer_id"]),
        "webhooks": .list(.mapping([
            "url": .value(.text, flag: "--webhook"),
            "secret_file": .value(.file, flag: "--webhook-secret-file"),
        ], required: ["url", "secret_file"]), most: 64),
        "retention": .mapping([
            "rules_file": .value(.file, flag: "--retention-rules"),
            "path": .value(.text, flag: "--retention-path"),
        ], required: ["rules_file"]),
        "consumption_policy_file": .value(.file, flag: "--consumption-policy"),
    ], required: ["bundle_id"])
}

extension ServeConfigShape {
    /// Each flag the file's keys make, with its key (an item of a list as `[0]`, the only app).
    static let keysByFlag: [String: String] = {
        var keys: [String: String] = [:]
        func walk(_ shape: ServeConfigShape, _ key: String) {
            switch shape {
            case .mapping(let entries, _): for (name, entry) in entries { walk(entry, key.isEmpty ? name : key + "." + name) }
            case .list(let item, _): walk(item, key + "[0]")
            case .value(_, let flag): keys[flag] = key
            }
        }
        walk(file, "")
        return keys
    }()
}
