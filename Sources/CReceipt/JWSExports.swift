#if canImport(Glibc)
import Glibc
#endif
import ReceiptCore
import ReceiptHeader
import Synchronization

/// A decoded JWS as C holds it: NUL-terminated copies of the payload, the header
/// and each string a caller has asked for, made on first request and kept until
/// the handle is freed (so borrowed pointers stay valid, from any thread).
final class JWSHandle: @unchecked Sendable {  // immutable but for `strings`, which is locked
    let payload: SignedPayload
    private let strings = Mutex<[String: UnsafeMutablePointer<CChar>]>([:])
    /// Keys of `strings` that are no payload path.
    private static let payloadKey = "\u{0}payload", headerKey = "\u{0}header"

    init(_ payload: SignedPayload) {
        self.payload = payload
    }

    deinit {
        strings.withLock { $0.values.forEach { free($0) } }
    }

    func payloadCString() throws(ReceiptError) -> (UnsafePointer<CChar>, Int) {
        (try cString(atPath: Self.payloadKey, payload.payloadText), payload.payloadBytes.count)
    }

    func headerCString() throws(ReceiptError) -> (UnsafePointer<CChar>, Int) {
        let text = payload.headerText
        return (try cString(atPath: Self.headerKey, text), text.utf8.count)
    }

    /// The string at `path`, copied once per path: the copies are bounded by the
    /// payload's own members.
    func cString(atPath path: String, _ value: String) throws(ReceiptError) -> UnsafePointer<CChar> {
        try strings.withLock { (held) throws(ReceiptError) -> UnsafePointer<CChar> in
            if let known = held[path] { return UnsafePointer(known) }
            let copy = try ownedCString(value)
            held[path] = copy
            return UnsafePointer(copy)
        }
    }
}

func jwsHandle(_ handle: OpaquePointer?) -> JWSHandle? { object(handle, as: JWSHandle.self) }

func inputBytes(_ data: UnsafeRawPointer?, _ length: Int) throws(ReceiptError) -> UnsafeBufferPointer<UInt8> {
    guard data != nil || length == 0 else { throw nullArgument }
    return UnsafeBufferPointer(start: data?.assumingMemoryBound(to: UInt8.self), count: length)
}

@c @implementation
public func receipt_jws_decode_unverified(_ data: UnsafeRawPointer?, _ length: Int,
                                          _ outJWS: UnsafeMutablePointer<OpaquePointer?>?,
                                          _ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    outJWS?.pointee = nil
    return reportingErrors(outError) { () throws(ReceiptError) in
        let out = try required(outJWS)
        out.pointee = handle(JWSHandle(try SignedPayload.decode(try inputBytes(data, length))))
    }
}

@c @implementation
public func receipt_verify_jws(_ verifier: OpaquePointer?, _ data: UnsafeRawPointer?, _ length: Int,
                               _ outJWS: UnsafeMutablePointer<OpaquePointer?>?,
                               _ outResult: UnsafeMutablePointer<OpaquePointer?>?,
                               _ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    receipt_verify_jws_as(verifier, data, length, RECEIPT_JWS_UNKNOWN, outJWS, outResult, outError)
}

@c @implementation
public func receipt_verify_jws_as(_ verifier: OpaquePointer?, _ data: UnsafeRawPointer?, _ length: Int,
                                  _ type: receipt_jws_type_t,
                                  _ outJWS: UnsafeMutablePointer<OpaquePointer?>?,
                                  _ outResult: UnsafeMutablePointer<OpaquePointer?>?,
                                  _ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    outJWS?.pointee = nil
    outResult?.pointee = nil
    do throws(ReceiptError) {
        let checker = try required(object(verifier, as: ReceiptVerifier.self))
        let (payload, result) = try checker.verify(jws: try inputBytes(data, length), as: try payloadKind(type))
        let jws = outJWS == nil ? nil : JWSHandle(payload)
        let report = outResult == nil ? nil : VerificationReport(result)
        if let jws { outJWS?.pointee = handle(jws) }
        if let report { outResult?.pointee = handle(report) }
        return reportVerdict(result, outError)
    } catch {
        return reportFailure(error, outError)
    }
}

@c @implementation
public func receipt_jws_free(_ jws: OpaquePointer?) {
    release(jws, as: JWSHandle.self)
}

/// The kind a caller names; RECEIPT_JWS_UNKNOWN: told from the members.
private func payloadKind(_ type: receipt_jws_type_t) throws(ReceiptError) -> SignedPayloadKind? {
    switch type {
    case RECEIPT_JWS_UNKNOWN: nil
    case RECEIPT_JWS_TRANSACTION: .transaction
    case RECEIPT_JWS_RENEWAL_INFO: .renewalInfo
    case RECEIPT_JWS_NOTIFICATION: .notification
    case RECEIPT_JWS_APP_TRANSACTION: .appTransaction
    case RECEIPT_JWS_REALTIME_REQUEST: .realtimeRequest
    default: throw ReceiptError(.invalidArgument, "JWS type \(type.rawValue) is not a receipt_jws_type_t")
    }
}

@c @implementation
public func receipt_jws_type(_ jws: OpaquePointer?) -> receipt_jws_type_t {
    switch jwsHandle(jws)?.payload.kind {
    case .transaction: RECEIPT_JWS_TRANSACTION
    case .renewalInfo: RECEIPT_JWS_RENEWAL_INFO
    case .notification: RECEIPT_JWS_NOTIFICATION
    case .appTransaction: RECEIPT_JWS_APP_TRANSACTION
    case .realtimeRequest: RECEIPT_JWS_REALTIME_REQUEST
    case .unknown, nil: RECEIPT_JWS_UNKNOWN
    }
}

private func borrowJSON(_ jws: OpaquePointer?, _ outJSON: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                        _ outLength: UnsafeMutablePointer<Int>?,
                        _ part: (JWSHandle) throws(ReceiptError) -> (UnsafePointer<CChar>, Int)) -> receipt_status_t {
    status { () throws(ReceiptError) in
        let (out, held) = (try required(outJSON), try required(jwsHandle(jws)))
        let (text, count) = try part(held)
        out.pointee = text
        outLength?.pointee = count
    }
}

@c @implementation
public func receipt_jws_payload(_ jws: OpaquePointer?, _ outJSON: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                                _ outLength: UnsafeMutablePointer<Int>?) -> receipt_status_t {
    borrowJSON(jws, outJSON, outLength) { (held) throws(ReceiptError) in try held.payloadCString() }
}

@c @implementation
public func receipt_jws_header(_ jws: OpaquePointer?, _ outJSON: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                               _ outLength: UnsafeMutablePointer<Int>?) -> receipt_status_t {
    borrowJSON(jws, outJSON, outLength) { (held) throws(ReceiptError) in try held.headerCString() }
}

/// The member at a C path argument, with ABSENT for absent or null members.
private func member(_ jws: OpaquePointer?, _ path: UnsafePointer<CChar>?) throws(ReceiptError) -> (JWSHandle, String, JSONValue) {
    let held = try required(jwsHandle(jws))
    let name = try required(try string(path))
    guard let value = held.payload.payload.member(atPath: name), value != .null else {
        throw ReceiptError(.absent, "the payload has no \(name)")
    }
    return (held, name, value)
}

private func wrongKind(_ name: String, _ value: JSONValue, _ wanted: String) -> ReceiptError {
    ReceiptError(.wrongFieldKind, "\(name) is \(value.kindName), not \(wanted)")
}

@c @implementation
public func receipt_jws_get_string(_ jws: OpaquePointer?, _ path: UnsafePointer<CChar>?,
                                   _ outValue: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                                   _ outLength: UnsafeMutablePointer<Int>?) -> receipt_status_t {
    status { () throws(ReceiptError) in
        let out = try required(outValue)
        let (held, name, value) = try member(jws, path)
        guard let text = value.stringValue else { throw wrongKind(name, value, "a string") }
        out.pointee = try held.cString(atPath: name, text)
        outLength?.pointee = text.utf8.count
    }
}

@c @implementation
public func receipt_jws_get_int(_ jws: OpaquePointer?, _ path: UnsafePointer<CChar>?,
                                _ outValue: UnsafeMutablePointer<Int64>?) -> receipt_status_t {
    status { () throws(ReceiptError) in
        let out = try required(outValue)
        let (_, name, value) = try member(jws, path)
        guard case .number(let text) = value, let number = Int64(text) else { throw wrongKind(name, value, "a whole number") }
        out.pointee = number
    }
}

@c @implementation
public func receipt_jws_get_date(_ jws: OpaquePointer?, _ path: UnsafePointer<CChar>?,
                                 _ outMilliseconds: UnsafeMutablePointer<Int64>?) -> receipt_status_t {
    status { () throws(ReceiptError) in
        let out = try required(outMilliseconds)
        let (_, name, value) = try member(jws, path)
        guard let milliseconds = value.epochMilliseconds else { throw wrongKind(name, value, "a date in epoch ms") }
        out.pointee = milliseconds
    }
}

@c @implementation
public func receipt_jws_get_bool(_ jws: OpaquePointer?, _ path: UnsafePointer<CChar>?,
                                 _ outValue: UnsafeMutablePointer<Int32>?) -> receipt_status_t {
    status { () throws(ReceiptError) in
        let out = try required(outValue)
        let (_, name, value) = try member(jws, path)
        guard let flag = value.boolValue else { throw wrongKind(name, value, "a boolean") }
        out.pointee = flag ? 1 : 0
    }
}

@c @implementation
public func receipt_jws_signed_date(_ jws: OpaquePointer?, _ outMilliseconds: UnsafeMutablePointer<Int64>?) -> receipt_status_t {
    status { () throws(ReceiptError) in
        let (out, held) = (try required(outMilliseconds), try required(jwsHandle(jws)))
        guard let signed = held.payload.signingDate else {
            throw ReceiptError(.absent, "the payload has no \(held.payload.signingDateName)")
        }
        out.pointee = signed
    }
}

@c @implementation
public func receipt_jws_to_json(_ jws: OpaquePointer?, _ flags: UInt32,
                                _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                                _ outLength: UnsafeMutablePointer<Int>?) -> receipt_status_t {
    status { () throws(ReceiptError) in
        let (out, held) = (try required(outJSON), try required(jwsHandle(jws)))
        try writeJSON(SignedPayloadJSON.render(held.payload, indent: try jsonIndent(flags)), out, outLength)
    }
}
