#if canImport(Glibc)
import Glibc
#endif
import ReceiptCore
import ReceiptHeader

/// A VerifyReceiptExchange with NUL-terminated copies of its URL and body for C.
final class ExchangeHandle {
    var exchange: VerifyReceiptExchange
    let body: UnsafeMutablePointer<CChar>
    var url: UnsafeMutablePointer<CChar>

    init(_ exchange: VerifyReceiptExchange) throws(ReceiptError) {
        self.exchange = exchange
        body = try ownedCString(exchange.body)
        url = try ownedCString(exchange.url)
    }

    deinit {
        free(body)
        free(url)
    }
}

@c @implementation
public func receipt_appstore_exchange_new(_ data: UnsafeRawPointer?, _ length: Int, _ password: UnsafePointer<CChar>?,
                                          _ excludeOldTransactions: Int32, _ start: receipt_environment_t,
                                          _ productionURL: UnsafePointer<CChar>?, _ sandboxURL: UnsafePointer<CChar>?,
                                          _ retries: Int32, _ outExchange: UnsafeMutablePointer<OpaquePointer?>?,
                                          _ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    outExchange?.pointee = nil
    return reportingErrors(outError) { () throws(ReceiptError) in
        let (out, bytes) = (try required(outExchange), try required(data))
        guard retries >= 0 else { throw ReceiptError(.invalidArgument, "retries is negative") }
        let request = try VerifyReceiptRequest(receipt: Array(UnsafeRawBufferPointer(start: bytes, count: length)),
                                               password: try string(password),
                                               excludeOldTransactions: excludeOldTransactions != 0)
        let exchange = VerifyReceiptExchange(request: request, startIn: try environment(start),
                                             productionURL: try string(productionURL), sandboxURL: try string(sandboxURL),
                                             retries: Int(retries))
        out.pointee = handle(try ExchangeHandle(exchange))
    }
}

@c @implementation
public func receipt_appstore_exchange_url(_ exchange: OpaquePointer?) -> UnsafePointer<CChar>? {
    object(exchange, as: ExchangeHandle.self).map { UnsafePointer($0.url) }
}

@c @implementation
public func receipt_appstore_exchange_body(_ exchange: OpaquePointer?) -> UnsafePointer<CChar>? {
    object(exchange, as: ExchangeHandle.self).map { UnsafePointer($0.body) }
}

@c @implementation
public func receipt_appstore_exchange_handle(_ exchange: OpaquePointer?, _ httpStatus: Int32, _ body: UnsafePointer<CChar>?,
                                             _ length: Int,
                                             _ outStep: UnsafeMutablePointer<receipt_exchange_step_t>?) -> receipt_status_t {
    status { () throws(ReceiptError) in
        let (out, state) = (try required(outStep), try required(object(exchange, as: ExchangeHandle.self)))
        guard body != nil || length == 0 else { throw nullArgument }
        let text = String(decoding: UnsafeRawBufferPointer(start: body, count: length), as: UTF8.self)
        var step = receipt_exchange_step_t()
        switch state.exchange.handle(httpStatus: Int(httpStatus), body: text) {
        case .send(let url, let delay):
            let copy = try ownedCString(url)
            free(state.url)
            state.url = copy
            step.action = RECEIPT_EXCHANGE_SEND
            step.delay_ms = Int32(delay)
        case .accepted(let status):
            step.action = RECEIPT_EXCHANGE_ACCEPTED
            step.status = status
        case .rejected(let status):
            step.action = RECEIPT_EXCHANGE_REJECTED
            step.status = status
        case .unavailable(let reason):
            step.action = RECEIPT_EXCHANGE_UNAVAILABLE
            copyDetail(ReceiptError(.ok, reason), into: &step.detail)
        }
        out.pointee = step
    }
}

@c @implementation
public func receipt_appstore_exchange_free(_ exchange: OpaquePointer?) {
    release(exchange, as: ExchangeHandle.self)
}
