import ReceiptCore
import ReceiptHeader

func attributeCount(_ handle: OpaquePointer?, _ purchase: Int?) -> Int {
    parsedReceipt(handle)?.attributeCount(purchase: purchase) ?? 0
}

func attribute(_ handle: OpaquePointer?, _ purchase: Int?, _ index: Int,
               _ outAttribute: UnsafeMutablePointer<receipt_attribute_t>?) -> receipt_status_t {
    status { () throws(ReceiptError) in
        let out = try required(outAttribute)
        let found = try required(parsedReceipt(handle)).borrowedAttribute(at: index, purchase: purchase)
        out.pointee = receipt_attribute_t(type: found.type, version: found.version,
                                          value: found.value.baseAddress, value_length: found.value.count)
    }
}

@c @implementation
public func receipt_attribute_count(_ receipt: OpaquePointer?) -> Int {
    attributeCount(receipt, nil)
}

@c @implementation
public func receipt_attribute_at(_ receipt: OpaquePointer?, _ index: Int,
                                 _ outAttribute: UnsafeMutablePointer<receipt_attribute_t>?) -> receipt_status_t {
    attribute(receipt, nil, index, outAttribute)
}

@c @implementation
public func receipt_purchase_attribute_count(_ receipt: OpaquePointer?, _ purchase: Int) -> Int {
    attributeCount(receipt, purchase)
}

@c @implementation
public func receipt_purchase_attribute_at(_ receipt: OpaquePointer?, _ purchase: Int, _ index: Int,
                                          _ outAttribute: UnsafeMutablePointer<receipt_attribute_t>?) -> receipt_status_t {
    attribute(receipt, purchase, index, outAttribute)
}
