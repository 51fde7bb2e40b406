import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ReceiptCore
import Testing
@testable import ReceiptServer

/// The route table (ServerRoutes): every route is found where it is declared, and a request
/// with a method its entry does not take is 405 with `Allow`, before any handler runs.
@Suite struct RouteTableTests {
    static let notifications = "/notifications/v2"
    static let retention = "/retention/realtime"
    /// swift-metrics is bootstrapped once a process: one ServerMetrics for every test.
    static let metrics = ServerMetrics()

    let routes = ServerRoutes(notificationsPath: notifications, retentionPath: retention)

    /// A path the route answers: its own, or one under its prefix.
    static func path(of route: ServerRoute) -> String {
        switch route.path {
        case .exact(let path): path
        case .prefix(let prefix): prefix + "2000000000000001"
        }
    }

    @Test func everyRouteIsFoundWhereItIsDeclared() {
        for route in ServerRoute.fixed {
            #expect(routes.route(for: Self.path(of: route))?.route.name == route.name, "\(Self.path(of: route))")
        }
        #expect(routes.route(for: Self.notifications)?.route.name == .notifications)
        #expect(routes.route(for: Self.retention)?.route.name == .retention)
        #expect(routes.route(for: "/v1/subscriptions/2000000000000001")?.rest == "2000000000000001")
        // A prefix's path without the slash is another route's, or none.
        #expect(routes.route(for: "/v1/subscriptions")?.route.name == .subscriptionList)
        #expect(routes.route(for: "/v1/stats") == nil)
        // Escaped unreserved characters are the characters; a reserved one stays escaped.
        #expect(routes.route(for: "/v1/%73ubscriptions/%32%30%30%30")?.rest == "2000")
        #expect(routes.route(for: "/v1/events/evt_0%2Freplay")?.rest == "evt_0%2Freplay")
        #expect(routes.route(for: "/v1/subscriptions/1%3")?.rest == "1%3")
        #expect(routes.route(for: "/v1/subscriptions/%7e%zz")?.rest == "~%zz")
        #expect(routes.route(for: "/nowhere") == nil)
        #expect(ServerRoutes(notificationsPath: Self.notifications, retentionPath: nil).route(for: Self.retention) == nil)
    }

    @Test func theReservedPathsAreTheFixedRoutes() {
        #expect(Set(ServerRoute.reservedPaths).count == ServerRoute.reservedPaths.count)
        for route in ServerRoute.fixed {
            switch route.path {
            case .exact(let path): #expect(ServerRoute.reservedPaths.contains(path))
            case .prefix(let prefix): #expect(ServerRoute.reservedPrefixes.contains(prefix))
            }
        }
    }

    @Test func everyRouteAnswersItsMethodsAnd405Otherwise() async throws {
        var settings = ServerSettings(verifier: ReceiptVerifier())
        settings.retention = nil
        let responder = ReceiptResponder(settings: settings, metrics: Self.metrics, store: nil,
                                         readiness: ServerReadiness(storeReady: true, announce: { _ in }), catchUp: nil,
                                         wake: nil, consumptionWake: nil)
        let routes = ServerRoute.fixed + [ServerRoute(.notifications, .exact(settings.notificationsPath), methods: [.post])]
        let methods: [HTTPRequest.Method] = [.get, .head, .post, .put, .delete, .patch]
        try await Application(responder: responder).test(.router) { client in
            // Every route at its path, and the paths under /v1/events/, whose methods differ by path.
            let cases = routes.map { (route: $0, path: Self.path(of: $0)) }
                + ["replay-failed", "evt_0/replay"].map { (route: routes.first { $0.name == .event }!, path: "/v1/events/" + $0) }
            for (route, path) in cases {
                let rest = try #require(self.routes.route(for: path)).rest
                guard let taken = route.methods(under: rest) else { continue }  // the handler answers every method itself
                for method in methods {
                    let response = try await client.execute(uri: path, method: method)
                    if taken.contains(method) {
                        #expect(response.status != .methodNotAllowed, "\(method) \(path)")
                    } else {
                        #expect(response.status == .methodNotAllowed, "\(method) \(path)")
                        #expect(response.headers[.allow] == taken.map(\.rawValue).joined(separator: ", "))
                    }
                }
            }
            // Without a store, a route that needs one is 503 whatever the credential.
            #expect(try await client.execute(uri: "/v1/events", method: .get).status == .serviceUnavailable)
            #expect(try await client.execute(uri: "/nowhere", method: .get).status == .notFound)
        }
    }
}
