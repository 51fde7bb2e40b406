import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ReceiptCore

/// What every area of the server answers with: a body and its content type, and the server's
/// one error body, `{"status": NAME, "detail": "…"}`: a refused input under its ReceiptStatus
/// name (`refusal`), the server's own trouble under a name of its own (`failure`: NO_STORE,
/// STORE_UNAVAILABLE, NOT_FOUND, …). A handler returns its answer with the status label the
/// metrics record (`Labeled`).
enum ServerAnswer {
    typealias Labeled = (Response, String)

    static let jsonType = "application/json"

    static func json(_ status: HTTPResponse.Status, _ bytes: [UInt8]) -> Response {
        response(status, contentType: jsonType, bytes)
    }

    static let textType = "text/plain; charset=utf-8"

    static func text(_ status: HTTPResponse.Status, _ text: String) -> Response {
        response(status, contentType: textType, Array(text.utf8))
    }

    /// A path that is no route's.
    static let noRouteText = "not found\n"
    static func noRoute() -> Labeled { (text(.notFound, noRouteText), "404") }

    static func response(_ status: HTTPResponse.Status, contentType: String, _ bytes: [UInt8]) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = contentType
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// The error body of the server's own trouble (the shape of the core's refusals, so that
    /// a client reads one shape).
    static func failure(_ name: String, _ detail: String) -> [UInt8] { NotificationEndpoint.failure(name, detail) }

    /// The error body of an input refused, under its status's name.
    static func refusal(_ error: ReceiptError) -> [UInt8] { failure(error.status.name, error.detail) }

    /// `failure` as JSON under `status`, labeled with its code.
    static func failure(_ status: HTTPResponse.Status, _ name: String, _ detail: String) -> Labeled {
        (json(status, failure(name, detail)), String(status.code))
    }

    /// 400 for a request whose arguments can never be taken, saying what they must be.
    static func badRequest(_ detail: String) -> Labeled {
        (json(.badRequest, refusal(ReceiptError(.invalidArgument, detail))), "400")
    }

    static func noStore() -> Labeled {
        failure(.serviceUnavailable, "NO_STORE", "this server keeps no store: start it with --store FILE")
    }

    /// A request that needs the store before its migration has committed (ServerReadiness): 503
    /// with Retry-After, for the caller to ask again.
    static func storeMigrating() -> Labeled {
        var (response, label) = failure(.serviceUnavailable, "STORE_MIGRATING",
                                        "the store is being migrated to this server's schema; ask again shortly")
        response.headers[.retryAfter] = "5"
        return (response, label)
    }

    /// A read the store could not serve (gone away, past its deadline): 503, for the caller to ask again.
    static func storeUnavailable(_ error: any Error, _ logger: Logger) -> Labeled {
        logger.error("store read failed: \(error)")
        return failure(.serviceUnavailable, "STORE_UNAVAILABLE", "the store could not be read; ask again")
    }

    /// A request's body, or nil past `limit` bytes: refused from Content-Length before any of
    /// it is read, or once that many bytes have arrived. Inlined: each async call of its own is
    /// one more job on the event loop's queue.
    @inline(__always) static func body(of request: Request, upTo limit: Int) async throws -> [UInt8]? {
        if let declared = request.headers[.contentLength].flatMap({ Int($0) }), declared > limit { return nil }
        do {
            let buffer = try await request.body.collect(upTo: limit)
            return Array(buffer.readableBytesView)
        } catch is NIOTooManyBytesError {
            return nil
        }
    }

    static func methodNotAllowed(allow: String) -> Response {
        var response = text(.methodNotAllowed, "method not allowed; use \(allow)\n")
        response.headers[.allow] = allow
        return response
    }

    /// An HTML page of the dashboard: no script, no frame, nothing fetched (the page is all there is), never cached,
    /// and no address of it handed to another site.
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!

    static func page(_ status: HTTPResponse.Status, _ html: String) -> (Response, String) {
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.contentSecurityPolicy] = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'"
        headers[.cacheControl] = "no-store"
        headers[Self.referrerPolicy] = "no-referrer"
        return (Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: html))), String(status.code))
    }
}
