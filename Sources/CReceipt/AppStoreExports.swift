import ReceiptCore
import ReceiptHeader

func environment(_ value: receipt_environment_t) throws(ReceiptError) -> AppStoreEnvironment {
    switch value {
    case RECEIPT_ENVIRONMENT_PRODUCTION: return .production
    case RECEIPT_ENVIRONMENT_SANDBOX: return .sandbox
    default: throw ReceiptError(.invalidArgument, "unknown environment \(value.rawValue)")
    }
}

@c @implementation
public func receipt_appstore_endpoint(_ value: receipt_environment_t) -> UnsafePointer<CChar>? {
    switch value {
    case RECEIPT_ENVIRONMENT_PRODUCTION: cString(AppStoreEnvironment.production.staticEndpoint)
    case RECEIPT_ENVIRONMENT_SANDBOX: cString(AppStoreEnvironment.sandbox.staticEndpoint)
    default: nil
    }
}

@c @implementation
public func receipt_appstore_request(_ data: UnsafeRawPointer?, _ length: Int, _ password: UnsafePointer<CChar>?,
                                     _ excludeOldTransactions: Int32,
                                     _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                                     _ outLength: UnsafeMutablePointer<Int>?,
                                     _ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    reportingErrors(outError) { () throws(ReceiptError) in
        let (out, bytes) = (try required(outJSON), try required(data))
        let request = try VerifyReceiptRequest(receipt: Array(UnsafeRawBufferPointer(start: bytes, count: length)),
                                               password: try string(password),
                                               excludeOldTransactions: excludeOldTransactions != 0)
        try writeJSON(request.jsonBody, out, outLength)
    }
}

@c @implementation
public func receipt_appstore_parse_response(_ json: UnsafePointer<CChar>?, _ length: Int,
                                            _ outAnswer: UnsafeMutablePointer<receipt_appstore_answer_t>?,
                                            _ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    reportingErrors(outError) { () throws(ReceiptError) in
        let (out, text) = (try required(outAnswer), try required(json))
        let body = UnsafeRawBufferPointer(start: text, count: length)
        let response = try VerifyReceiptResponse.parse(String(decoding: body, as: UTF8.self))
        let next: receipt_next_step_t = switch response.nextStep {
        case .accept: RECEIPT_NEXT_ACCEPT
        case .retryInSandbox: RECEIPT_NEXT_RETRY_IN_SANDBOX
        case .retryInProduction: RECEIPT_NEXT_RETRY_IN_PRODUCTION
        case .retryLater: RECEIPT_NEXT_RETRY_LATER
        case .reject: RECEIPT_NEXT_REJECT
        }
        out.pointee = receipt_appstore_answer_t(
            status: response.status, next_step: next,
            is_retryable: response.isRetryable.map { $0 ? 1 : 0 } ?? -1,
            environment: response.environment.map { $0 == .production ? 0 : 1 } ?? -1)
    }
}

@c @implementation
public func receipt_appstore_local_response(_ data: UnsafeRawPointer?, _ length: Int, _ verifier: OpaquePointer?,
                                            _ expecting: receipt_environment_t, _ flags: UInt32,
                                            _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                                            _ outLength: UnsafeMutablePointer<Int>?) -> receipt_status_t {
    status { () throws(ReceiptError) in
        let (out, checker) = (try required(outJSON), try required(object(verifier, as: ReceiptVerifier.self)))
        guard data != nil || length == 0 else { throw nullArgument }
        let bytes = Array(UnsafeRawBufferPointer(start: data, count: length))
        let json = LocalVerifyReceipt.response(for: bytes, verifier: checker, expecting: try environment(expecting),
                                               indent: try jsonIndent(flags))
        try writeJSON(json, out, outLength)
    }
}
