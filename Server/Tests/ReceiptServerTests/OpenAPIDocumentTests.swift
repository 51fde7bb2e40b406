import Foundation
import ReceiptCore
import Testing
@testable import ReceiptServer

/// The OpenAPI document (Endpoints/openapi.json, served at /openapi.json) and the route table
/// name the same routes with the same methods: a route added to one and not the other fails here.
@Suite struct OpenAPIDocumentTests {
    static let operations: Set<String> = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
    let routes = ServerRoutes(notificationsPath: ServerSettings.Defaults.notificationsPath,
                              retentionPath: ServerSettings.Defaults.retentionPath)

    func document() throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.bytes)) as? [String: Any])
    }

    /// The document's paths, each with its methods (upper-case, as HTTP names them).
    func documentedPaths() throws -> [String: Set<String>] {
        let paths = try #require(try document()["paths"] as? [String: [String: Any]])
        return paths.mapValues { Set($0.keys.filter(Self.operations.contains).map { $0.uppercased() }) }
    }

    /// A request path the templated path stands for: each `{parameter}` a segment of digits.
    static func concrete(_ templated: String) -> String {
        templated.split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("{") && $0.hasSuffix("}") ? "2000000000000001" : String($0) }
            .joined(separator: "/")
    }

    /// The list of subscriptions' parameters are documented as the list takes them: every query
    /// parameter it takes, both page operations naming them alike, and the names `began` takes.
    @Test func theListOfSubscriptionsIsDocumentedAsItTakesItsParameters() throws {
        let paths = try #require(try document()["paths"] as? [String: [String: Any]])
        let components = try #require(try document()["components"] as? [String: Any])
        let parameters = try #require(components["parameters"] as? [String: [String: Any]])
        for (path, methods) in [(SubscriptionListController.path, ["get"]), (SubscriptionListController.pagePath, ["get", "head"])] {
            for method in methods {
                let operation = try #require(paths[path]?[method] as? [String: Any], "\(method) \(path)")
                let references = try #require(operation["parameters"] as? [[String: String]])
                let names = references.compactMap { $0["$ref"]?.split(separator: "/").last.flatMap { parameters[String($0)]?["name"] as? String } }
                #expect(Set(names) == SubscriptionListController.parameters, "\(method) \(path)")
            }
        }
        let began = try #require(parameters["SubscriptionListBegan"]?["schema"] as? [String: Any])
        #expect(began["enum"] as? [String] == SubscriptionList.Began.names)
    }

    @Test func everyDocumentedPathIsARouteTakingItsMethods() throws {
        for (path, methods) in try documentedPaths() {
            let (route, rest) = try #require(routes.route(for: Self.concrete(path)), "\(path) is no route")
            #expect(!methods.isEmpty, "\(path) documents no operation")
            if let taken = route.methods(under: rest) {
                // Exactly the methods the path takes (a prefix's paths may take fewer than the prefix).
                #expect(methods == Set(taken.map(\.rawValue)), "\(path): \(methods) beside \(taken)")
            }
        }
    }

    @Test func everyRouteIsDocumentedWithEveryMethodItTakes() throws {
        let documented = try documentedPaths()
        for route in routes.all {
            let methods = documented.filter { routes.route(for: Self.concrete($0.key))?.route.name == route.name }
                .values.reduce(into: Set<String>()) { $0.formUnion($1) }
            #expect(!methods.isEmpty, "\(route.summary) is not documented")
            if let taken = route.methods { #expect(methods == Set(taken.map(\.rawValue)), "\(route.summary): \(methods)") }
        }
    }

    @Test func theDocumentIsOpenAPI31OfThisVersion() throws {
        let document = try document()
        #expect(document["openapi"] as? String == "3.1.0")
        #expect((document["info"] as? [String: Any])?["version"] as? String == ReceiptVersion.string.description)
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        // The two configurable paths are documented at their defaults, naming the flag that moves them.
        #expect(paths[ServerSettings.Defaults.notificationsPath]?["x-receipt-path-setting"] as? String == "--notifications-path")
        #expect(paths[ServerSettings.Defaults.retentionPath]?["x-receipt-path-setting"] as? String == "--retention-path")
    }
}
