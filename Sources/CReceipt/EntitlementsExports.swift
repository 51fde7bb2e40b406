import ReceiptCore
import ReceiptHeader

@c @implementation
public func receipt_entitlements_json(_ receipt: OpaquePointer?, _ verifier: OpaquePointer?, _ atMilliseconds: Int64,
                                      _ catalogJSON: UnsafePointer<CChar>?, _ flags: UInt32,
                                      _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                                      _ outLength: UnsafeMutablePointer<Int>?) -> receipt_status_t {
    status { () throws(ReceiptError) in
        let (out, parsed) = (try required(outJSON), try required(parsedReceipt(receipt)))
        let (checker, indent, catalog) = try entitlementSettings(verifier, flags, catalogJSON)
        let entitlements: Entitlements
        if let checker {
            entitlements = try Entitlements.of(parsed, verified: checker.verify(parsed), at: atMilliseconds, catalog: catalog)
        } else {
            entitlements = Entitlements.ofUnverified(parsed, at: atMilliseconds, catalog: catalog)
        }
        try writeJSON(EntitlementsJSON.render(entitlements, indent: indent), out, outLength)
    }
}

/// The verifier (nil only with RECEIPT_ENTITLEMENTS_UNVERIFIED), the JSON indent and the catalog.
private func entitlementSettings(_ verifier: OpaquePointer?, _ flags: UInt32, _ catalogJSON: UnsafePointer<CChar>?)
    throws(ReceiptError) -> (ReceiptVerifier?, Int?, ProductCatalog) {
    let indent = try jsonIndent(flags & ~RECEIPT_ENTITLEMENTS_UNVERIFIED)
    let catalog = try string(catalogJSON).map { (text) throws(ReceiptError) in try EntitlementsJSON.catalog(text) }
        ?? ProductCatalog()
    let checker = object(verifier, as: ReceiptVerifier.self)
    guard checker != nil || flags & RECEIPT_ENTITLEMENTS_UNVERIFIED != 0 else {
        throw ReceiptError(.invalidArgument, "no verifier: pass RECEIPT_ENTITLEMENTS_UNVERIFIED to judge without one")
    }
    return (checker, indent, catalog)
}

/// Most tokens one call takes (receipt.h).
private let maxSignedTransactions = 1_000_000

@c @implementation
public func receipt_entitlements_signed_json(_ receipt: OpaquePointer?, _ transactions: UnsafePointer<UnsafeRawPointer?>?,
                                             _ lengths: UnsafePointer<Int>?, _ count: Int, _ verifier: OpaquePointer?,
                                             _ atMilliseconds: Int64, _ catalogJSON: UnsafePointer<CChar>?, _ flags: UInt32,
                                             _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                                             _ outLength: UnsafeMutablePointer<Int>?,
                                             _ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    reportingErrors(outError) { () throws(ReceiptError) in
        let out = try required(outJSON)
        let (checker, indent, catalog) = try entitlementSettings(verifier, flags, catalogJSON)
        guard count <= maxSignedTransactions else {
            throw ReceiptError(.invalidArgument, "\(count) tokens; at most \(maxSignedTransactions) in one call")
        }
        guard count == 0 || (transactions != nil && lengths != nil) else { throw nullArgument }
        var signed: [(SignedPayload, VerificationResult)] = []
        var payloads: [SignedPayload] = []
        for index in 0..<count {
            do throws(ReceiptError) {
                let bytes = try inputBytes(transactions![index], lengths![index])
                if let checker {
                    signed.append(try checker.verify(jws: bytes))
                } else {
                    payloads.append(try SignedPayload.decode(bytes))
                }
            } catch {
                throw ReceiptError(error.status, at: error.offset, "transaction \(index): \(error.detail)")
            }
        }
        let parsed = parsedReceipt(receipt)
        let entitlements: Entitlements
        if let checker {
            entitlements = try Entitlements.of(payloads: signed, receipt: parsed.map { ($0, checker.verify($0)) },
                                               at: atMilliseconds, catalog: catalog)
        } else {
            entitlements = try Entitlements.ofUnverified(payloads: payloads, receipt: parsed, at: atMilliseconds,
                                                         catalog: catalog)
        }
        try writeJSON(EntitlementsJSON.render(entitlements, indent: indent), out, outLength)
    }
}
