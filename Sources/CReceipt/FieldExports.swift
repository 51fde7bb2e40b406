import ReceiptCore
import ReceiptHeader

@c @implementation
public func receipt_field_count() -> Int {
    ReceiptField.allCases.count
}

@c @implementation
public func receipt_field_at(_ index: Int, _ outField: UnsafeMutablePointer<receipt_field_t>?) -> receipt_status_t {
    status { () throws(ReceiptError) in
        let out = try required(outField)
        guard index >= 0 && index < ReceiptField.allCases.count else {
            throw ReceiptError(.indexOutOfRange, "field index \(index)")
        }
        out.pointee = receipt_field_t(rawValue: UInt32(ReceiptField.allCases[index].rawValue))
    }
}

@c @implementation
public func receipt_field_name(_ field: receipt_field_t) -> UnsafePointer<CChar>? {
    ReceiptField(rawValue: Int32(bitPattern: field.rawValue)).map { cString($0.staticName) }
}

@c @implementation
public func receipt_field_kind(_ field: receipt_field_t) -> receipt_field_kind_t {
    guard let known = ReceiptField(rawValue: Int32(bitPattern: field.rawValue)) else { return RECEIPT_KIND_NONE }
    switch known.kind {
    case .string: return RECEIPT_KIND_STRING
    case .integer: return RECEIPT_KIND_INTEGER
    case .boolean: return RECEIPT_KIND_BOOLEAN
    case .date: return RECEIPT_KIND_DATE
    case .bytes: return RECEIPT_KIND_BYTES
    case .purchases: return RECEIPT_KIND_PURCHASES
    }
}

// The app getters and the purchase getters share these; `purchase` nil is the app record.

func getString(_ handle: OpaquePointer?, _ purchase: Int?, _ field: receipt_field_t,
               _ outValue: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
               _ outLength: UnsafeMutablePointer<Int>?) -> receipt_status_t {
    status { () throws(ReceiptError) in
        let (out, parsed) = (try required(outValue), try required(parsedReceipt(handle)))
        let (text, length) = try parsed.borrowedText(Int32(bitPattern: field.rawValue), purchase: purchase)
        out.pointee = text
        outLength?.pointee = length
    }
}

func getNumber(_ handle: OpaquePointer?, _ purchase: Int?, _ field: receipt_field_t,
               _ request: Receipt.NumberRequest, _ outValue: UnsafeMutablePointer<Int64>?) -> receipt_status_t {
    status { () throws(ReceiptError) in
        let (out, parsed) = (try required(outValue), try required(parsedReceipt(handle)))
        out.pointee = try parsed.number(Int32(bitPattern: field.rawValue), purchase: purchase, as: request)
    }
}

func getBytes(_ handle: OpaquePointer?, _ purchase: Int?, _ field: receipt_field_t,
              _ outBytes: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
              _ outLength: UnsafeMutablePointer<Int>?) -> receipt_status_t {
    status { () throws(ReceiptError) in
        let (out, outCount) = (try required(outBytes), try required(outLength))
        let bytes = try required(parsedReceipt(handle)).borrowedValueBytes(Int32(bitPattern: field.rawValue), purchase: purchase)
        out.pointee = bytes.baseAddress
        outCount.pointee = bytes.count
    }
}

@c @implementation
public func receipt_get_string(_ receipt: OpaquePointer?, _ field: receipt_field_t,
                               _ outValue: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                               _ outLength: UnsafeMutablePointer<Int>?) -> receipt_status_t {
    getString(receipt, nil, field, outValue, outLength)
}

@c @implementation
public func receipt_get_int(_ receipt: OpaquePointer?, _ field: receipt_field_t,
                            _ outValue: UnsafeMutablePointer<Int64>?) -> receipt_status_t {
    getNumber(receipt, nil, field, .integer, outValue)
}

@c @implementation
public func receipt_get_date(_ receipt: OpaquePointer?, _ field: receipt_field_t,
                             _ outMilliseconds: UnsafeMutablePointer<Int64>?) -> receipt_status_t {
    getNumber(receipt, nil, field, .date, outMilliseconds)
}

@c @implementation
public func receipt_get_bytes(_ receipt: OpaquePointer?, _ field: receipt_field_t,
                              _ outBytes: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
                              _ outLength: UnsafeMutablePointer<Int>?) -> receipt_status_t {
    getBytes(receipt, nil, field, outBytes, outLength)
}
