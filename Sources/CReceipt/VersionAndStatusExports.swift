import ReceiptCore
import ReceiptHeader

@c @implementation
public func receipt_version() -> UInt32 {
    UInt32(ReceiptVersion.major * 10000 + ReceiptVersion.minor * 100 + ReceiptVersion.patch)
}

@c @implementation
public func receipt_version_string() -> UnsafePointer<CChar>? {
    cString(ReceiptVersion.string)
}

@c @implementation
public func receipt_status_name(_ status: receipt_status_t) -> UnsafePointer<CChar>? {
    cString(ReceiptStatus(status)?.staticName ?? "RECEIPT_E_UNKNOWN_STATUS")
}

@c @implementation
public func receipt_status_string(_ status: receipt_status_t) -> UnsafePointer<CChar>? {
    cString(ReceiptStatus(status)?.staticMessage ?? "unknown status")
}
