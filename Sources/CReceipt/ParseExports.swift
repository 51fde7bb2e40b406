import ReceiptCore
import ReceiptHeader

@c @implementation
public func receipt_parse(_ data: UnsafeRawPointer?, _ length: Int,
                          _ outReceipt: UnsafeMutablePointer<OpaquePointer?>?,
                          _ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    outReceipt?.pointee = nil
    return reportingErrors(outError) { () throws(ReceiptError) in
        let out = try required(outReceipt)
        guard data != nil || length == 0 else { throw nullArgument }
        let bytes = UnsafeBufferPointer(start: data?.assumingMemoryBound(to: UInt8.self), count: length)
        out.pointee = handle(try Receipt.parse(bytes))
    }
}

@c @implementation
public func receipt_free(_ receipt: OpaquePointer?) {
    release(receipt, as: Receipt.self)
}
