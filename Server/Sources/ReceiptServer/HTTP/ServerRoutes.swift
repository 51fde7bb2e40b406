import HTTPTypes
@_spi(ReceiptInternal) import ReceiptCore

/// Every route `receipt serve` answers, each declared once: its path (or the prefix it
/// answers under), the methods it takes, its metrics label, whether it needs the store,
/// the credential it takes and the query parameters it takes. ReceiptResponder.respond
/// reads the entry before any handler runs: 404, 405, 503 without a store, 401, 403 and
/// 429 (ClientThrottle), 400 for a query parameter not taken or given twice, and the
/// headers every answer carries. Adding a route: an entry here, a case in
/// ReceiptResponder.dispatch, and its handler.
struct ServerRoute: Sendable {
    enum Name: Sendable {
        case verifyReceipt, sandboxVerifyReceipt, verify, notifications, retention, subscriptions, entitlements, consent,
             consumption, events, event, stats, subscriptionList, dashboard, dashboardCSV, subscriptionListPage, customerPage,
             healthz, readyz, metrics, openAPI
    }

    enum Path: Sendable, Equatable {
        case exact(String)
        /// Everything under it; the handler gets the rest of the path.
        case prefix(String)
    }

    /// What a caller must carry (ServerCredentials).
    enum Access: Sendable, Equatable {
        /// Nothing: Apple's protocols (each verifies what it is sent), health.
        case open
        /// What the store knows of customers: a read token for GET and HEAD, the write token for POST.
        case customerData
        /// A page of the dashboard: as customerData's reads, the token also as a browser's Basic password.
        case page
        /// `/metrics`: the read token or a metrics token.
        case metrics
    }

    let name: Name
    let path: Path
    /// The methods taken (405 with Allow for others); nil: the handler answers every method
    /// itself (Apple's verifyReceipt answers a GET in its own protocol).
    let methods: [HTTPRequest.Method]?
    /// The `endpoint` label of its metrics: its path, a prefix's without the trailing slash.
    let label: String
    let needsStore: Bool
    let access: Access
    /// The query parameters taken; nil: the handler reads and checks its own (/v1/verify).
    let query: Set<String>?
    /// For a prefix whose paths take different methods, the methods of the path under it (the
    /// rest); `methods` is then all of them, which the help and the OpenAPI test read.
    let methodsUnder: (@Sendable (Substring) -> [HTTPRequest.Method])?

    init(_ name: Name, _ path: Path, methods: [HTTPRequest.Method]?, store: Bool = false,
         access: Access = .open, query: Set<String>? = [],
         methodsUnder: (@Sendable (Substring) -> [HTTPRequest.Method])? = nil) {
        (self.name, self.path, self.methods, self.needsStore, self.access, self.query) = (name, path, methods, store, access, query)
        self.methodsUnder = methodsUnder
        label = switch path {
        case .exact(let text): text
        case .prefix(let text): String(text.dropLast())
        }
    }

    /// How `receipt serve --help` names it: its methods and its path (`...` for what follows a prefix;
    /// ASCII, as the man page made from the help takes it).
    var summary: String {
        let path = switch path {
        case .exact(let path): path
        case .prefix(let prefix): prefix + "..."
        }
        return (methods?.map(\.rawValue).joined(separator: "/") ?? "any method") + " " + path
    }

    /// The methods a request to the path under it (`rest`) may use; nil: any.
    func methods(under rest: Substring) -> [HTTPRequest.Method]? {
        methodsUnder?(rest) ?? methods
    }

    /// Whether its answers hold customer data (never cached: `Cache-Control: no-store`).
    var holdsCustomerData: Bool { access != .open }

    static let figureQuery: Set<String> = ["at", "from", "to", "by", "product"]
    /// The figures' parameters, and the answer's format (JSON or CSV).
    static let statsQuery = figureQuery.union(["format", "periods"])

    /// The routes at fixed paths, which --notifications-path and --retention-path cannot take.
    static let fixed: [ServerRoute] = [
        ServerRoute(.verifyReceipt, .exact("/verifyReceipt"), methods: nil),
        ServerRoute(.sandboxVerifyReceipt, .exact("/sandbox/verifyReceipt"), methods: nil),
        ServerRoute(.verify, .exact("/v1/verify"), methods: [.post], query: nil),
        ServerRoute(.subscriptions, .prefix("/v1/subscriptions/"), methods: [.get], store: true, access: .customerData),
        ServerRoute(.entitlements, .exact("/v1/entitlements"), methods: [.get], store: true, access: .customerData,
                    query: ["appAccountToken", "limit", "cursor"]),
        ServerRoute(.consent, .prefix("/v1/consent/"), methods: [.get], store: true, access: .customerData),
        ServerRoute(.consumption, .prefix("/v1/consumption/"), methods: [.get, .post], store: true, access: .customerData),
        ServerRoute(.events, .exact("/v1/events"), methods: [.get], store: true, access: .customerData,
                    query: ["state", "limit", "before"]),
        // An event (GET), its replay (POST …/replay) and the replay of every failed one (POST replay-failed).
        ServerRoute(.event, .prefix("/v1/events/"), methods: [.get, .post], store: true,
                    access: .customerData, query: ["force"],
                    methodsUnder: { $0 == "replay-failed" || $0.hasSuffix("/replay") ? [.post] : [.get] }),
        ServerRoute(.stats, .prefix("/v1/stats/"), methods: [.get], store: true, access: .customerData, query: statsQuery),
        // The subscriptions behind a count of /v1/stats/subscriptions.
        ServerRoute(.subscriptionList, .exact(SubscriptionListController.path), methods: [.get], store: true,
                    access: .customerData, query: SubscriptionListController.parameters),
        ServerRoute(.dashboard, .exact(DashboardController.path), methods: [.get, .head], store: true, access: .page,
                    query: figureQuery.union([DashboardController.cohortsParameter])),
        // A figure's CSV as the page links it: what /v1/stats/FIGURE?format=csv answers, the token as a page takes it.
        ServerRoute(.dashboardCSV, .prefix(DashboardController.csvPath), methods: [.get], store: true, access: .page,
                    query: figureQuery),
        ServerRoute(.subscriptionListPage, .exact(SubscriptionListController.pagePath), methods: [.get, .head], store: true,
                    access: .page, query: SubscriptionListController.parameters),
        ServerRoute(.customerPage, .exact(CustomerPageController.path), methods: [.get, .head], store: true, access: .page,
                    query: ["id"]),
        ServerRoute(.healthz, .exact("/healthz"), methods: [.get, .head]),
        ServerRoute(.readyz, .exact("/readyz"), methods: [.get, .head]),
        ServerRoute(.metrics, .exact("/metrics"), methods: [.get], access: .metrics),
        ServerRoute(.openAPI, .exact(OpenAPIDocument.path), methods: [.get, .head]),
    ]

    /// The fixed routes' exact paths and prefixes (a configured path may be none of them, nor under a prefix).
    static let reservedPaths = fixed.compactMap { if case .exact(let path) = $0.path { path } else { nil } }
    static let reservedPrefixes = fixed.compactMap { if case .prefix(let prefix) = $0.path { prefix } else { nil } }
}

/// The routes of one server: the fixed ones and those at the paths it was configured with.
struct ServerRoutes: Sendable {
    private let exact: [String: ServerRoute]
    private let prefixed: [(prefix: String, route: ServerRoute)]
    /// Every route, in the table's order (the OpenAPI document's test reads them).
    let all: [ServerRoute]

    /// The routes a server with these settings answers.
    init(settings: ServerSettings) {
        self.init(notificationsPath: settings.notificationsPath, retentionPath: settings.retention == nil ? nil : settings.retentionPath)
    }

    init(notificationsPath: String, retentionPath: String?) {
        var routes = ServerRoute.fixed
        routes.append(ServerRoute(.notifications, .exact(notificationsPath), methods: [.post], store: true))
        if let retentionPath {
            routes.append(ServerRoute(.retention, .exact(retentionPath), methods: [.post]))
        }
        all = routes
        var exact: [String: ServerRoute] = [:]
        var prefixed: [(String, ServerRoute)] = []
        for route in routes {
            switch route.path {
            case .exact(let path): exact[path] = route
            case .prefix(let prefix): prefixed.append((prefix, route))
            }
        }
        (self.exact, self.prefixed) = (exact, prefixed)
    }

    /// The route that answers `path`, with the rest of the path under its prefix ("" for an exact one).
    /// An unreserved character written as a percent-escape is that character (RFC 3986 §6.2.2.2:
    /// `%31` is `1`, as a client's URL library may write an id); other escapes are kept (`%2F` is no `/`).
    func route(for path: String) -> (route: ServerRoute, rest: Substring)? {
        let path = path.utf8.contains(UInt8(ascii: "%")) ? Self.decodingUnreserved(path) : path
        if let route = exact[path] { return (route, path.dropFirst(path.count)) }
        for (prefix, route) in prefixed where path.hasPrefix(prefix) { return (route, path.dropFirst(prefix.count)) }
        return nil
    }

    /// `path` with each percent-escape of an unreserved character (letters, digits, `-._~`) decoded.
    static func decodingUnreserved(_ path: String) -> String {
        let bytes = Array(path.utf8)
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
               let high = hexDigitValue(bytes[index + 1]), let low = hexDigitValue(bytes[index + 2]), isUnreserved(high << 4 | low) {
                decoded.append(high << 4 | low)
                index += 3
            } else {
                decoded.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: decoded, as: UTF8.self)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "-._~".utf8.contains(byte)
        }
    }
}
