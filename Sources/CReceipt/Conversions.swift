import ReceiptCore
import ReceiptHeader

// Conversions between C arguments and ReceiptCore values. Nothing here decides
// anything about receipts; it only moves values across the boundary.

extension receipt_status_t {
    init(_ status: ReceiptStatus) {
        self.init(rawValue: UInt32(bitPattern: status.rawValue))
    }
}

extension ReceiptStatus {
    init?(_ status: receipt_status_t) {
        self.init(rawValue: Int32(bitPattern: status.rawValue))
    }
}

func cString(_ text: StaticString) -> UnsafePointer<CChar> {
    UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
}

// Every opaque handle is one retained Swift object; its _free function releases it.

func handle(_ object: AnyObject) -> OpaquePointer {
    OpaquePointer(Unmanaged.passRetained(object).toOpaque())
}

func object<T: AnyObject>(_ handle: OpaquePointer?, as type: T.Type) -> T? {
    guard let handle else { return nil }
    return Unmanaged<T>.fromOpaque(UnsafeRawPointer(handle)).takeUnretainedValue()
}

func release<T: AnyObject>(_ handle: OpaquePointer?, as type: T.Type) {
    guard let handle else { return }
    Unmanaged<T>.fromOpaque(UnsafeRawPointer(handle)).release()
}

func parsedReceipt(_ handle: OpaquePointer?) -> Receipt? { object(handle, as: Receipt.self) }

/// A C string argument as a Swift String, refusing invalid UTF-8.
func string(_ text: UnsafePointer<CChar>?) throws(ReceiptError) -> String? {
    guard let text else { return nil }
    guard let value = String(validatingCString: text) else {
        throw ReceiptError(.invalidArgument, "a string argument is not valid UTF-8")
    }
    return value
}

/// Runs a body that reports failure by throwing, and turns the outcome into a status.
func status(_ body: () throws(ReceiptError) -> Void) -> receipt_status_t {
    do {
        try body()
        return receipt_status_t(.ok)
    } catch {
        LastError.record(error)
        return receipt_status_t(error.status)
    }
}

/// As `status`, also filling a caller's receipt_error_t (cleared on success).
func reportingErrors(_ outError: UnsafeMutablePointer<receipt_error_t>?,
                     _ body: () throws(ReceiptError) -> Void) -> receipt_status_t {
    do throws(ReceiptError) {
        try body()
        fill(outError, with: nil)
        return receipt_status_t(.ok)
    } catch {
        return reportFailure(error, outError)
    }
}

/// A verdict's status, its first failure in the caller's receipt_error_t and the thread's last error.
func reportVerdict(_ result: VerificationResult, _ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    reportVerdict(result.firstFailure, outError)
}

/// A verdict's first failure (nil: valid), reported as reportFailure does.
func reportVerdict(_ failure: ReceiptError?, _ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    fill(outError, with: failure)
    failure.map(LastError.record)
    return receipt_status_t(failure?.status ?? .ok)
}

/// A call's failure, reported the same two ways.
func reportFailure(_ error: ReceiptError, _ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    fill(outError, with: error)
    LastError.record(error)
    return receipt_status_t(error.status)
}

let nullArgument = ReceiptError(.nullArgument, "a required pointer argument is NULL")

func required<T>(_ pointer: T?) throws(ReceiptError) -> T {
    guard let pointer else { throw nullArgument }
    return pointer
}

func fill(_ error: UnsafeMutablePointer<receipt_error_t>?, with failure: ReceiptError?) {
    guard let error else { return }
    error.pointee.status = receipt_status_t(failure?.status ?? .ok)
    error.pointee.offset = failure?.offset ?? Int(bitPattern: UInt(RECEIPT_NO_OFFSET))
    copyDetail(failure, into: &error.pointee.detail)
}

/// A detail into a fixed C char array, cut at a UTF-8 boundary and NUL-terminated.
func copyDetail<Buffer>(_ failure: ReceiptError?, into field: inout Buffer) {
    let detail = failure?.detailPrefix(maxBytes: MemoryLayout<Buffer>.size - 1) ?? []
    withUnsafeMutableBytes(of: &field) { buffer in
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        buffer.copyBytes(from: detail)
    }
}
