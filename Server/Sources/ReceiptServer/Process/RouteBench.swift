import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// How much finding a request's route costs: the server's own table (ServerRoutes: the route
/// for the path, its methods checked, the handler chosen by a switch) beside Hummingbird's
/// `Router` holding the same routes (its trie, its parameters, its method table), each
/// answering with an empty response, on the same requests. The rest of a request's cost is
/// the same for both, so the difference is what the Router would add to every request
/// (`make bench`, docs/performance.md).
public enum RouteBench {
    /// Median nanoseconds per request of each (`table`, `router`), over a mix of the routes
    /// the server answers most (verifyReceipt, a subscription, entitlements) and the others.
    public static func run(samples: Int, calls: Int = 20_000) async throws -> [(String, Int64)] {
        let routes = ServerRoutes(notificationsPath: ServerSettings.Defaults.notificationsPath,
                                  retentionPath: ServerSettings.Defaults.retentionPath)
        let router = Router(context: BenchContext.self)
        for route in ServerRoute.fixed + [ServerRoute(.notifications, .exact(ServerSettings.Defaults.notificationsPath),
                                                      methods: [.post])] {
            let path: RouterPath = switch route.path {
            case .exact(let path): RouterPath(path)
            case .prefix(let prefix): RouterPath(prefix + "**")
            }
            for method in route.methods ?? [.get, .post] {
                router.on(path, method: method) { _, context in
                    Response(status: context.parameters.getCatchAll().isEmpty ? .ok : .accepted)
                }
            }
        }
        let responder = router.buildResponder()
        let requests: [Request] = [
            (.post, "/verifyReceipt"), (.get, "/v1/subscriptions/2000000000000001"), (.post, "/verifyReceipt"),
            (.get, "/v1/entitlements?appAccountToken=7e3fb20b-4cdb-47cc-936d-99d65f608138"),
            (.post, "/v1/verify"), (.get, "/v1/subscriptions/2000000000000002"), (.post, "/sandbox/verifyReceipt"),
            (.get, "/v1/consent/2000000000000003"), (.post, ServerSettings.Defaults.notificationsPath),
            (.get, "/v1/events/evt_01"), (.get, "/v1/stats/subscriptions"), (.get, "/healthz"),
        ].map { method, path in
            Request(head: HTTPRequest(method: method, scheme: "http", authority: "localhost", path: path),
                    body: RequestBody(buffer: ByteBuffer()))
        }
        let context = BenchContext(source: BenchSource(logger: Logger(label: "receipt.bench-routes")))
        // Both answer every request alike, or the comparison would be of different work.
        for request in requests {
            let (table, routed) = (try await tableResponse(request, routes), try await responder.respond(to: request, context: context))
            guard table.status == routed.status else {
                throw BenchMismatch(description: "\(request.uri.path): the table answers \(table.status), the Router \(routed.status)")
            }
        }
        let perBatch = Int64(requests.count)
        return [
            ("table", try await BenchTiming.median(samples, calls / requests.count, 1) {
                for request in requests { _ = try await tableResponse(request, routes) }
            } / perBatch),
            ("router", try await BenchTiming.median(samples, calls / requests.count, 1) {
                for request in requests { _ = try await responder.respond(to: request, context: context) }
            } / perBatch),
        ]
    }

    struct BenchMismatch: Error, CustomStringConvertible {
        let description: String
    }

    /// What ReceiptResponder does to find a route, answered as the Router's handlers answer.
    private static func tableResponse(_ request: Request, _ routes: ServerRoutes) async throws -> Response {
        guard let (route, rest) = routes.route(for: request.uri.path) else { return Response(status: .notFound) }
        if let methods = route.methods, !methods.contains(request.method) { return Response(status: .methodNotAllowed) }
        return Response(status: rest.isEmpty ? .ok : .accepted)
    }
}

/// A context with no connection behind it: the bench's requests come from no socket.
private struct BenchSource: RequestContextSource {
    let logger: Logger
}

private struct BenchContext: RequestContext {
    typealias Source = BenchSource
    var coreContext: CoreRequestContextStorage

    init(source: BenchSource) { coreContext = .init(source: source) }
}
