#if canImport(Glibc)
import Glibc
#endif
import ReceiptCore
import ReceiptHeader

// The App Store Server API tier (RECEIPT_SERVER_API): handles around
// ServerAPICredentials, ServerAPIClient and ServerAPIExchange, and C copies of
// what they build. The rules are in ReceiptCore/ServerAPI.

/// ServerAPICredentials is a struct; C holds it in this box.
final class CredentialsBox {
    let credentials: ServerAPICredentials
    init(_ credentials: ServerAPICredentials) { self.credentials = credentials }
}

/// Bytes in malloc'd memory with a NUL after them, owned by a handle: C may keep
/// the pointer until the handle replaces or frees them (a Swift array's storage
/// may not be held outside the closure that lends it).
final class OwnedCBytes {
    let pointer: UnsafeMutablePointer<UInt8>
    let count: Int

    init(_ bytes: some Collection<UInt8>) {
        count = bytes.count
        pointer = .allocate(capacity: count + 1)
        _ = UnsafeMutableBufferPointer(start: pointer, count: count).initialize(from: bytes)
        pointer[count] = 0
    }

    convenience init(_ text: String) { self.init(Array(text.utf8)) }

    var cString: UnsafePointer<CChar> { UnsafeRawPointer(pointer).assumingMemoryBound(to: CChar.self) }

    deinit { pointer.deallocate() }
}

/// An exchange with NUL-terminated copies of its current request and last answer.
final class ServerAPIExchangeHandle {
    var exchange: ServerAPIExchange
    private(set) var method = OwnedCBytes("")
    private(set) var url = OwnedCBytes("")
    private(set) var headers: [(name: OwnedCBytes, value: OwnedCBytes)] = []
    private(set) var body = OwnedCBytes([])
    var answer: OwnedCBytes?
    /// Apple's errorMessage after a failure.
    var errorMessage: OwnedCBytes?

    init(_ exchange: ServerAPIExchange) {
        self.exchange = exchange
        copyRequest()
    }

    func copyRequest() {
        let request = exchange.request
        method = OwnedCBytes(request.method)
        url = OwnedCBytes(request.url)
        headers = request.headers.map { (OwnedCBytes($0.name), OwnedCBytes($0.value)) }
        body = OwnedCBytes(request.body)
    }
}

func credentialsArgument(_ credentials: OpaquePointer?) throws(ReceiptError) -> ServerAPICredentials {
    try required(object(credentials, as: CredentialsBox.self)).credentials
}

@c @implementation
public func receipt_api_credentials_new(_ pem: UnsafePointer<CChar>?, _ length: Int, _ keyID: UnsafePointer<CChar>?,
                                        _ issuerID: UnsafePointer<CChar>?, _ bundleID: UnsafePointer<CChar>?,
                                        _ outCredentials: UnsafeMutablePointer<OpaquePointer?>?,
                                        _ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    outCredentials?.pointee = nil
    return reportingErrors(outError) { () throws(ReceiptError) in
        try makeCredentials(pem, length, keyID, issuerID, bundleID, .appStoreConnect, outCredentials)
    }
}

func makeCredentials(_ pem: UnsafePointer<CChar>?, _ length: Int, _ keyID: UnsafePointer<CChar>?,
                     _ issuerID: UnsafePointer<CChar>?, _ bundleID: UnsafePointer<CChar>?,
                     _ idForm: ServerAPICredentials.IDForm,
                     _ outCredentials: UnsafeMutablePointer<OpaquePointer?>?) throws(ReceiptError) {
    let (out, key) = (try required(outCredentials), try required(pem))
    let credentials = try ServerAPICredentials(
        privateKeyPEM: Array(UnsafeRawBufferPointer(start: key, count: length)),
        keyID: try required(string(keyID)), issuerID: try string(issuerID), bundleID: try required(string(bundleID)),
        idForm: idForm)
    out.pointee = handle(CredentialsBox(credentials))
}

@c @implementation
public func receipt_api_credentials_new_with_form(_ pem: UnsafePointer<CChar>?, _ length: Int,
                                                  _ keyID: UnsafePointer<CChar>?, _ issuerID: UnsafePointer<CChar>?,
                                                  _ bundleID: UnsafePointer<CChar>?, _ form: receipt_api_id_form_t,
                                                  _ outCredentials: UnsafeMutablePointer<OpaquePointer?>?,
                                                  _ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    outCredentials?.pointee = nil
    return reportingErrors(outError) { () throws(ReceiptError) in
        let idForm: ServerAPICredentials.IDForm = switch form {
        case RECEIPT_API_IDS_APP_STORE_CONNECT: .appStoreConnect
        case RECEIPT_API_IDS_HEADER_SAFE: .headerSafe
        default: throw ReceiptError(.invalidArgument, "id form \(form.rawValue) is none of receipt_api_id_form_t")
        }
        try makeCredentials(pem, length, keyID, issuerID, bundleID, idForm, outCredentials)
    }
}

@c @implementation
public func receipt_api_credentials_free(_ credentials: OpaquePointer?) {
    release(credentials, as: CredentialsBox.self)
}

@c @implementation
public func receipt_api_client_new(_ credentials: OpaquePointer?, _ environment: receipt_environment_t,
                                   _ baseURL: UnsafePointer<CChar>?, _ verifier: OpaquePointer?,
                                   _ outClient: UnsafeMutablePointer<OpaquePointer?>?,
                                   _ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    outClient?.pointee = nil
    return reportingErrors(outError) { () throws(ReceiptError) in
        let out = try required(outClient)
        let client = try ServerAPIClient(credentials: try credentialsArgument(credentials),
                                         environment: try policyEnvironment(environment), baseURL: try string(baseURL),
                                         verifier: object(verifier, as: ReceiptVerifier.self))
        out.pointee = handle(client)
    }
}

@c @implementation
public func receipt_api_client_free(_ client: OpaquePointer?) {
    release(client, as: ServerAPIClient.self)
}

/// The call names as static C strings, made once.
// Written once, at first use, then only read: safe to share.
nonisolated(unsafe) let callNames: [UnsafeMutablePointer<CChar>] = ServerAPICall.all.map { strdup($0.name)! }

@c @implementation
public func receipt_api_call_count() -> Int { callNames.count }

@c @implementation
public func receipt_api_call_name(_ index: Int) -> UnsafePointer<CChar>? {
    callNames.indices.contains(index) ? UnsafePointer(callNames[index]) : nil
}

/// Apple's error names as static C strings, made once.
nonisolated(unsafe) let errorNames: [Int64: UnsafeMutablePointer<CChar>] = ServerAPIErrorCode.names.mapValues { strdup($0)! }

@c @implementation
public func receipt_api_error_name(_ code: Int64) -> UnsafePointer<CChar>? {
    errorNames[code].map { UnsafePointer($0) }
}

/// Apple's verifier statuses as static C strings, made once.
nonisolated(unsafe) let appleVerificationStatusNames: [AppleVerificationStatus: UnsafeMutablePointer<CChar>] =
    Dictionary(uniqueKeysWithValues: AppleVerificationStatus.allCases.map { ($0, strdup($0.rawValue)!) })

@c @implementation
public func receipt_api_apple_verification_status(_ status: receipt_status_t) -> UnsafePointer<CChar>? {
    // A status this library does not know is none Apple names either: its VERIFICATION_FAILURE.
    let apple = ReceiptStatus(status).map(AppleVerificationStatus.init) ?? .VERIFICATION_FAILURE
    return appleVerificationStatusNames[apple].map { UnsafePointer($0) }
}

@c @implementation
public func receipt_api_apple_refusal(_ result: OpaquePointer?, _ production: Int32,
                                      _ outStatus: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                                      _ outStep: UnsafeMutablePointer<Int>?) -> receipt_status_t {
    status { () throws(ReceiptError) in
        let (out, verdict) = (try required(outStatus), try required(report(result)))
        let refusal = AppleVerificationStatus.refusal(of: verdict.result, production: production != 0)
        out.pointee = appleVerificationStatusNames[refusal.status].map { UnsafePointer($0) }
        outStep?.pointee = refusal.step ?? Int(bitPattern: UInt.max)
    }
}

let errorCodes = ServerAPIErrorCode.names.keys.sorted()

@c @implementation
public func receipt_api_error_count() -> Int { errorCodes.count }

@c @implementation
public func receipt_api_error_code(_ index: Int) -> Int64 {
    errorCodes.indices.contains(index) ? errorCodes[index] : 0
}

@c @implementation
public func receipt_api_exchange_new(_ client: OpaquePointer?, _ call: UnsafePointer<CChar>?,
                                     _ argumentsJSON: UnsafePointer<CChar>?, _ length: Int, _ retries: Int32,
                                     _ outExchange: UnsafeMutablePointer<OpaquePointer?>?,
                                     _ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    outExchange?.pointee = nil
    return reportingErrors(outError) { () throws(ReceiptError) in
        let (out, api) = (try required(outExchange), try required(object(client, as: ServerAPIClient.self)))
        let named = try ServerAPICall.named(try required(string(call)))
        guard argumentsJSON != nil || length == 0 else { throw nullArgument }
        let arguments = try ServerAPIArguments.parse(Array(UnsafeRawBufferPointer(start: argumentsJSON, count: length)))
        let exchange = try ServerAPIExchange(client: api, call: named, arguments: arguments, retries: Int(retries))
        out.pointee = handle(ServerAPIExchangeHandle(exchange))
    }
}

func exchangeHandle(_ exchange: OpaquePointer?) -> ServerAPIExchangeHandle? {
    object(exchange, as: ServerAPIExchangeHandle.self)
}

@c @implementation
public func receipt_api_exchange_fall_back_to_sandbox(_ exchange: OpaquePointer?, _ sandbox: OpaquePointer?,
                                                      _ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    reportingErrors(outError) { () throws(ReceiptError) in
        let state = try required(exchangeHandle(exchange))
        try state.exchange.fallBack(to: try required(object(sandbox, as: ServerAPIClient.self)))
    }
}

@c @implementation
public func receipt_api_exchange_method(_ exchange: OpaquePointer?) -> UnsafePointer<CChar>? {
    exchangeHandle(exchange)?.method.cString
}

@c @implementation
public func receipt_api_exchange_url(_ exchange: OpaquePointer?) -> UnsafePointer<CChar>? {
    exchangeHandle(exchange)?.url.cString
}

@c @implementation
public func receipt_api_exchange_header_count(_ exchange: OpaquePointer?) -> Int {
    exchangeHandle(exchange)?.headers.count ?? 0
}

@c @implementation
public func receipt_api_exchange_header_name(_ exchange: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    guard let state = exchangeHandle(exchange), state.headers.indices.contains(index) else { return nil }
    return state.headers[index].name.cString
}

@c @implementation
public func receipt_api_exchange_header_value(_ exchange: OpaquePointer?, _ index: Int) -> UnsafePointer<CChar>? {
    guard let state = exchangeHandle(exchange), state.headers.indices.contains(index) else { return nil }
    return state.headers[index].value.cString
}

@c @implementation
public func receipt_api_exchange_body(_ exchange: OpaquePointer?, _ outLength: UnsafeMutablePointer<Int>?) -> UnsafePointer<UInt8>? {
    guard let state = exchangeHandle(exchange) else { outLength?.pointee = 0; return nil }
    outLength?.pointee = state.body.count
    return UnsafePointer(state.body.pointer)  // never NULL, even for an empty body
}

@c @implementation
public func receipt_api_exchange_handle(_ exchange: OpaquePointer?, _ httpStatus: Int32, _ retryAfter: UnsafePointer<CChar>?,
                                        _ body: UnsafeRawPointer?, _ length: Int,
                                        _ outStep: UnsafeMutablePointer<receipt_api_step_t>?,
                                        _ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    reportingErrors(outError) { () throws(ReceiptError) in
        let (out, state) = (try required(outStep), try required(exchangeHandle(exchange)))
        guard body != nil || length == 0 else { throw nullArgument }
        state.answer = nil
        state.errorMessage = nil
        let bytes = Array(UnsafeRawBufferPointer(start: body, count: length))
        var step = receipt_api_step_t()
        step.retry_after_ms = -1
        // A header from the network, not the caller's text: bytes that are not UTF-8 make an
        // unreadable Retry-After (ignored), not a refused call.
        let header = retryAfter.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: strlen($0)), as: UTF8.self) }
        switch try state.exchange.handle(httpStatus: Int(httpStatus), retryAfter: header, body: bytes) {
        case .send(_, let delay):
            state.copyRequest()
            step.action = RECEIPT_API_SEND
            step.delay_ms = delay
        case .answered(let success):
            state.answer = OwnedCBytes(success.json)
            step.action = RECEIPT_API_ANSWERED
            step.has_more = success.nextPage == nil ? 0 : 1
        case .failed(let failure):
            step.action = RECEIPT_API_FAILED
            step.http_status = Int32(failure.httpStatus)
            step.api_error = failure.errorCode ?? 0
            step.retry_after_ms = failure.retryAfterMilliseconds ?? -1
            state.errorMessage = failure.errorMessage.map { OwnedCBytes($0) }
            copyDetail(ReceiptError(.ok, failure.summary), into: &step.detail)
        }
        out.pointee = step
    }
}

@c @implementation
public func receipt_api_exchange_answer(_ exchange: OpaquePointer?, _ outLength: UnsafeMutablePointer<Int>?) -> UnsafePointer<CChar>? {
    guard let answer = exchangeHandle(exchange)?.answer else { outLength?.pointee = 0; return nil }
    outLength?.pointee = answer.count
    return answer.cString
}

@c @implementation
public func receipt_api_exchange_error_message(_ exchange: OpaquePointer?) -> UnsafePointer<CChar>? {
    exchangeHandle(exchange)?.errorMessage?.cString
}

@c @implementation
public func receipt_api_exchange_next_page(_ exchange: OpaquePointer?, _ outHasNext: UnsafeMutablePointer<Int32>?,
                                           _ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    reportingErrors(outError) { () throws(ReceiptError) in
        let (out, state) = (try required(outHasNext), try required(exchangeHandle(exchange)))
        out.pointee = 0
        guard try state.exchange.nextPage() != nil else { return }
        state.answer = nil
        state.errorMessage = nil
        state.copyRequest()
        out.pointee = 1
    }
}

@c @implementation
public func receipt_api_exchange_free(_ exchange: OpaquePointer?) {
    release(exchange, as: ServerAPIExchangeHandle.self)
}

/// A signed request's text into a caller's out-parameters, freed by receipt_string_free.
func signing(_ outText: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ outLength: UnsafeMutablePointer<Int>?,
             _ outError: UnsafeMutablePointer<receipt_error_t>?, _ make: () throws(ReceiptError) -> String) -> receipt_status_t {
    reportingErrors(outError) { () throws(ReceiptError) in
        let out = try required(outText)
        try writeJSON(try make(), out, outLength)
    }
}

@c @implementation
public func receipt_api_promotional_offer_signature(_ credentials: OpaquePointer?, _ productIdentifier: UnsafePointer<CChar>?,
                                                    _ subscriptionOfferID: UnsafePointer<CChar>?,
                                                    _ applicationUsername: UnsafePointer<CChar>?, _ nonce: UnsafePointer<CChar>?,
                                                    _ timestamp: Int64, _ outSignature: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                                                    _ outLength: UnsafeMutablePointer<Int>?,
                                                    _ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    signing(outSignature, outLength, outError) { () throws(ReceiptError) in
        try SignedRequestCreators.promotionalOfferSignature(
            try credentialsArgument(credentials), productIdentifier: try required(string(productIdentifier)),
            subscriptionOfferID: try required(string(subscriptionOfferID)),
            applicationUsername: try required(string(applicationUsername)), nonce: try required(string(nonce)),
            timestampMilliseconds: timestamp)
    }
}

@c @implementation
public func receipt_api_promotional_offer_v2(_ credentials: OpaquePointer?, _ productID: UnsafePointer<CChar>?,
                                             _ offerIdentifier: UnsafePointer<CChar>?, _ transactionID: UnsafePointer<CChar>?,
                                             _ outJWS: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                                             _ outLength: UnsafeMutablePointer<Int>?,
                                             _ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    signing(outJWS, outLength, outError) { () throws(ReceiptError) in
        try SignedRequestCreators.promotionalOfferV2(
            try credentialsArgument(credentials), productID: try required(string(productID)),
            offerIdentifier: try required(string(offerIdentifier)), transactionID: try string(transactionID))
    }
}

@c @implementation
public func receipt_api_introductory_offer_eligibility(_ credentials: OpaquePointer?, _ productID: UnsafePointer<CChar>?,
                                                       _ allow: Int32, _ transactionID: UnsafePointer<CChar>?,
                                                       _ outJWS: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                                                       _ outLength: UnsafeMutablePointer<Int>?,
                                                       _ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    signing(outJWS, outLength, outError) { () throws(ReceiptError) in
        try SignedRequestCreators.introductoryOfferEligibility(
            try credentialsArgument(credentials), productID: try required(string(productID)),
            allowIntroductoryOffer: allow != 0, transactionID: try required(string(transactionID)))
    }
}

@c @implementation
public func receipt_api_advanced_commerce_request(_ credentials: OpaquePointer?, _ requestJSON: UnsafePointer<CChar>?,
                                                  _ length: Int, _ outJWS: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                                                  _ outLength: UnsafeMutablePointer<Int>?,
                                                  _ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    signing(outJWS, outLength, outError) { () throws(ReceiptError) in
        let request = try required(requestJSON)
        return try SignedRequestCreators.advancedCommerceInAppRequest(
            try credentialsArgument(credentials), requestJSON: Array(UnsafeRawBufferPointer(start: request, count: length)))
    }
}
