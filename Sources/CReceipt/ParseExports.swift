import ReceiptCore
import ReceiptHeader

@c @implementation
public func receipt_parse(_ data: UnsafeRawPointer?, _ length: Int,
                          _ outReceipt: UnsafeMutablePointer<OpaquePointer?>?,
                          _ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    outReceipt?.pointee = nil
    do throws(ReceiptError) {
        let out = try required(outReceipt)
        guard data != nil || length == 0 else { throw nullArgument }
        let bytes = UnsafeBufferPointer(start: data?.assumingMemoryBound(to: UInt8.self), count: length)
        out.pointee = handle(try Receipt.parse(bytes))
        fill(outError, with: nil)
        return receipt_status_t(.ok)
    } catch {
        fill(outError, with: error)
        return receipt_status_t(error.status)
    }
}

@c @implementation
public func receipt_free(_ receipt: OpaquePointer?) {
    release(receipt, as: Receipt.self)
}
