import ReceiptCore
import ReceiptHeader

/// Most tokens one call takes (receipt.h).
private let maxSubscriptionTokens = 1_000_000

@c @implementation
public func receipt_subscription_state_json(_ originalTransactionID: UnsafePointer<CChar>?,
                                            _ tokens: UnsafePointer<UnsafeRawPointer?>?, _ lengths: UnsafePointer<Int>?,
                                            _ count: Int, _ verifier: OpaquePointer?, _ atMilliseconds: Int64, _ flags: UInt32,
                                            _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                                            _ outLength: UnsafeMutablePointer<Int>?,
                                            _ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    reportingErrors(outError) { () throws(ReceiptError) in
        let out = try required(outJSON)
        guard let id = try string(originalTransactionID), !id.isEmpty else { throw nullArgument }
        let indent = try jsonIndent(flags & ~RECEIPT_ENTITLEMENTS_UNVERIFIED)
        let checker = object(verifier, as: ReceiptVerifier.self)
        guard checker != nil || flags & RECEIPT_ENTITLEMENTS_UNVERIFIED != 0 else {
            throw ReceiptError(.invalidArgument, "no verifier: pass RECEIPT_ENTITLEMENTS_UNVERIFIED to judge without one")
        }
        guard count <= maxSubscriptionTokens else {
            throw ReceiptError(.invalidArgument, "\(count) tokens; at most \(maxSubscriptionTokens) in one call")
        }
        guard count == 0 || (tokens != nil && lengths != nil) else { throw nullArgument }
        var payloads: [SignedPayload] = []
        for index in 0..<count {
            do throws(ReceiptError) {
                let bytes = try inputBytes(tokens![index], lengths![index])
                if let checker {
                    let (payload, result) = try checker.verify(jws: bytes)
                    if let failure = result.firstFailure { throw failure }
                    payloads.append(payload)
                } else {
                    payloads.append(try SignedPayload.decode(bytes))
                }
            } catch {
                throw ReceiptError(error.status, at: error.offset, "token \(index): \(error.detail)")
            }
        }
        guard let state = SubscriptionState(originalTransactionID: id, payloads: payloads, at: atMilliseconds) else {
            throw SubscriptionState.absence(of: id, in: payloads)
        }
        try writeJSON(String(decoding: SubscriptionStateJSON.render(state, indent: indent), as: UTF8.self), out, outLength)
    }
}
