/// The HTTP API described: `openapi.json` beside this file, an OpenAPI 3.1 document of every
/// route of ServerRoute's table (a test checks that both name the same paths and methods),
/// compiled in by SwiftPM (`embedInCode`) and served as it is at `GET /openapi.json`.
enum OpenAPIDocument {
    static let path = "/openapi.json"
    static let bytes: [UInt8] = PackageResources.openapi_json
}
