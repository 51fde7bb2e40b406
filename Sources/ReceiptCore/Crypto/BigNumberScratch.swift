internal import COpenSSL
import Synchronization

/// Scratch space for libcrypto's big-number arithmetic (BN_CTX), kept between
/// signature checks instead of made and freed by each: a fresh BN_CTX, and the
/// numbers the exponentiation then allocates in it, cost about 0.3 µs of a warm
/// receipt verdict's 20 (bench/bench.c). A context holds only public values
/// (signatures, keys), so reusing one across calls and threads leaks nothing.
enum BigNumberScratch {
    /// Contexts kept for reuse: one per thread that checks a signature at the same
    /// moment, up to this many; a context returned beyond it is freed.
    static let maxKept = 16

    /// A BN_CTX, used by one caller at a time (so it may pass between threads).
    private struct Context: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private static let kept = Mutex<[Context]>([])

    /// Runs `body` with a context of its own; nil when no memory is left for one.
    static func with<T>(_ body: (OpaquePointer) -> T) -> T? {
        guard let context = kept.withLock({ $0.popLast() }) ?? BN_CTX_new().map(Context.init) else { return nil }
        defer {
            let surplus = kept.withLock { free -> Context? in
                guard free.count < maxKept else { return context }
                free.append(context)
                return nil
            }
            if let surplus { BN_CTX_free(surplus.pointer) }
        }
        return body(context.pointer)
    }
}
