#if canImport(Glibc)
import Glibc
#endif
internal import COpenSSL

/// Scratch space for libcrypto's big-number arithmetic (BN_CTX), kept between
/// signature checks instead of made and freed by each: a fresh BN_CTX, and the
/// numbers the exponentiation then allocates in it, are a measurable part of a warm
/// receipt verdict (docs/performance.md). A context holds only public values
/// (signatures, keys), so reusing one across calls and threads leaks nothing.
enum BigNumberScratch {
    /// Contexts kept for reuse: one per thread that checks a signature at the same
    /// moment, up to this many; a context returned beyond it is freed.
    static let maxKept = 16

    private static let kept = ContextPool()

    /// Runs `body` with a context of its own; nil when no memory is left for one.
    static func with<T>(_ body: (OpaquePointer) -> T) -> T? {
        guard let context = kept.take() ?? BN_CTX_new() else { return nil }
        defer { if !kept.give(context) { BN_CTX_free(context) } }
        return body(context)
    }

    /// The free contexts behind a pthread mutex rather than Synchronization's Mutex:
    /// ThreadSanitizer intercepts pthread's, and the C ABI's 8-thread stress test runs
    /// under it (it took the futex-based Mutex's hand-offs for races).
    private final class ContextPool: @unchecked Sendable {
        private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        private var free: [OpaquePointer] = []

        init() { pthread_mutex_init(mutex, nil) }

        func take() -> OpaquePointer? {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return free.popLast()
        }

        /// False when the pool is full: the caller frees the context.
        func give(_ context: OpaquePointer) -> Bool {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            guard free.count < BigNumberScratch.maxKept else { return false }
            free.append(context)
            return true
        }
    }
}
