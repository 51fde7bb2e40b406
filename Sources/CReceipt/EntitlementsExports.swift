import ReceiptCore
import ReceiptHeader

@c @implementation
public func receipt_entitlements_json(_ receipt: OpaquePointer?, _ verifier: OpaquePointer?, _ atMilliseconds: Int64,
                                      _ catalogJSON: UnsafePointer<CChar>?, _ flags: UInt32,
                                      _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                                      _ outLength: UnsafeMutablePointer<Int>?) -> receipt_status_t {
    status { () throws(ReceiptError) in
        let (out, parsed) = (try required(outJSON), try required(parsedReceipt(receipt)))
        let unverified = flags & RECEIPT_ENTITLEMENTS_UNVERIFIED != 0
        let indent = try jsonIndent(flags & ~RECEIPT_ENTITLEMENTS_UNVERIFIED)
        let catalog = try string(catalogJSON).map { (text) throws(ReceiptError) in try EntitlementsJSON.catalog(text) }
            ?? ProductCatalog()
        let entitlements: Entitlements
        if let checker = object(verifier, as: ReceiptVerifier.self) {
            entitlements = try Entitlements.of(parsed, verified: checker.verify(parsed), at: atMilliseconds, catalog: catalog)
        } else if unverified {
            entitlements = Entitlements.ofUnverified(parsed, at: atMilliseconds, catalog: catalog)
        } else {
            throw ReceiptError(.invalidArgument, "no verifier: pass RECEIPT_ENTITLEMENTS_UNVERIFIED to judge without one")
        }
        try writeJSON(EntitlementsJSON.render(entitlements, indent: indent), out, outLength)
    }
}
