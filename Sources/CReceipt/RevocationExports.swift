import ReceiptCore
import ReceiptHeader

// The revocation (OCSP) loop of receipt.h: the queries a JWS's chain needs, and
// the answers handed back. The rules are ReceiptCore's (Verification/Revocation).

/// The queries with C copies of their URLs and bodies, valid until freed.
final class RevocationQueriesHandle {
    let queries: [RevocationQuery]
    let urls: [OwnedCBytes]
    let bodies: [OwnedCBytes]

    init(_ queries: [RevocationQuery]) {
        self.queries = queries
        urls = queries.map { OwnedCBytes($0.url) }
        bodies = queries.map { OwnedCBytes($0.request) }
    }
}

@c @implementation
public func receipt_verifier_builder_set_revocation(_ builder: OpaquePointer?,
                                                    _ mode: receipt_revocation_mode_t) -> receipt_status_t {
    withBuilder(builder) { (settings) throws(ReceiptError) in
        settings.policy.revocation = switch mode {
        case RECEIPT_REVOCATION_OFF: .off
        case RECEIPT_REVOCATION_SOFT: .soft
        case RECEIPT_REVOCATION_HARD: .hard
        default: throw ReceiptError(.invalidArgument, "unknown revocation mode \(mode.rawValue)")
        }
    }
}

@c @implementation
public func receipt_revocation_queries(_ verifier: OpaquePointer?, _ jws: UnsafePointer<CChar>?, _ length: Int,
                                       _ outQueries: UnsafeMutablePointer<OpaquePointer?>?,
                                       _ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    outQueries?.pointee = nil
    return reportingErrors(outError) { () throws(ReceiptError) in
        let (checker, out) = (try required(object(verifier, as: ReceiptVerifier.self)), try required(outQueries))
        let payload = try SignedPayload.decode(try inputBytes(jws, length))
        out.pointee = handle(RevocationQueriesHandle(try checker.revocationQueries(for: payload)))
    }
}

@c @implementation
public func receipt_revocation_query_count(_ queries: OpaquePointer?) -> Int {
    object(queries, as: RevocationQueriesHandle.self)?.queries.count ?? 0
}

@c @implementation
public func receipt_revocation_query_url(_ queries: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    guard let state = object(queries, as: RevocationQueriesHandle.self), state.urls.indices.contains(index) else { return nil }
    return state.urls[index].cString
}

@c @implementation
public func receipt_revocation_query_body(_ queries: OpaquePointer?, _ index: Int,
                                          _ outLength: UnsafeMutablePointer<Int>?) -> UnsafePointer<UInt8>? {
    guard let state = object(queries, as: RevocationQueriesHandle.self), state.bodies.indices.contains(index) else {
        outLength?.pointee = 0
        return nil
    }
    outLength?.pointee = state.bodies[index].count
    return UnsafePointer(state.bodies[index].pointer)
}

@c @implementation
public func receipt_revocation_answer(_ verifier: OpaquePointer?, _ queries: OpaquePointer?, _ index: Int,
                                      _ httpStatus: Int32, _ body: UnsafeRawPointer?, _ length: Int,
                                      _ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    reportingErrors(outError) { () throws(ReceiptError) in
        let checker = try required(object(verifier, as: ReceiptVerifier.self))
        let state = try required(object(queries, as: RevocationQueriesHandle.self))
        guard state.queries.indices.contains(index) else {
            throw ReceiptError(.indexOutOfRange, "query \(index) of \(state.queries.count)")
        }
        guard body != nil || length == 0 else { throw nullArgument }
        try checker.acceptRevocationAnswer(state.queries[index], httpStatus: Int(httpStatus),
                                           body: Array(UnsafeRawBufferPointer(start: body, count: length)))
    }
}

@c @implementation
public func receipt_revocation_queries_free(_ queries: OpaquePointer?) {
    release(queries, as: RevocationQueriesHandle.self)
}
