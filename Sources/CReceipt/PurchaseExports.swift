import ReceiptCore
import ReceiptHeader

@c @implementation
public func receipt_purchase_count(_ receipt: OpaquePointer?) -> Int {
    parsedReceipt(receipt)?.purchaseCount ?? 0
}

@c @implementation
public func receipt_purchase_get_string(_ receipt: OpaquePointer?, _ index: Int, _ field: receipt_field_t,
                                        _ outValue: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                                        _ outLength: UnsafeMutablePointer<Int>?) -> receipt_status_t {
    getString(receipt, index, field, outValue, outLength)
}

@c @implementation
public func receipt_purchase_get_int(_ receipt: OpaquePointer?, _ index: Int, _ field: receipt_field_t,
                                     _ outValue: UnsafeMutablePointer<Int64>?) -> receipt_status_t {
    getNumber(receipt, index, field, .integer, outValue)
}

@c @implementation
public func receipt_purchase_get_date(_ receipt: OpaquePointer?, _ index: Int, _ field: receipt_field_t,
                                      _ outMilliseconds: UnsafeMutablePointer<Int64>?) -> receipt_status_t {
    getNumber(receipt, index, field, .date, outMilliseconds)
}

@c @implementation
public func receipt_purchase_get_bytes(_ receipt: OpaquePointer?, _ index: Int, _ field: receipt_field_t,
                                       _ outBytes: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
                                       _ outLength: UnsafeMutablePointer<Int>?) -> receipt_status_t {
    getBytes(receipt, index, field, outBytes, outLength)
}
