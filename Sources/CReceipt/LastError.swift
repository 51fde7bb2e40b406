#if canImport(Glibc)
import Glibc
#endif
import ReceiptCore
import ReceiptHeader

/// The per-thread record behind receipt_last_error(): the last failure of a call
/// on this thread, with its detail, for the functions whose signature has no
/// receipt_error_t. Only failures write it, so a successful call costs nothing;
/// RECEIPT_E_ABSENT is an answer, not a failure, and is not recorded.
enum LastError {
    /// One receipt_error_t per thread, allocated at its first failure and freed
    /// when the thread exits.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { free($0) }
        return key
    }()

    static func record(_ error: ReceiptError) {
        guard error.status != .absent else { return }
        var slot = pthread_getspecific(key)
        if slot == nil {
            // Out of memory here leaves nothing to record into; the status is still returned.
            guard let memory = calloc(1, MemoryLayout<receipt_error_t>.size) else { return }
            pthread_setspecific(key, memory)
            slot = memory
        }
        fill(slot?.assumingMemoryBound(to: receipt_error_t.self), with: error)
    }

    static func copy(into out: UnsafeMutablePointer<receipt_error_t>) {
        if let slot = pthread_getspecific(key) {
            out.pointee = slot.assumingMemoryBound(to: receipt_error_t.self).pointee
        } else {
            fill(out, with: nil)
        }
    }
}

@c @implementation
public func receipt_last_error(_ outError: UnsafeMutablePointer<receipt_error_t>?) -> receipt_status_t {
    guard let outError else { return receipt_status_t(.nullArgument) }
    LastError.copy(into: outError)
    return receipt_status_t(.ok)
}
