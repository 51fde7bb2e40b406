import CGlibcMalloc

/// How glibc's allocator gives memory back in `receipt serve`'s process (not the library's:
/// a program that links libreceipt keeps its own settings).
public enum ServerAllocator {
    /// The free memory glibc keeps at the top of a thread's heap before it gives it back.
    ///
    /// Why: at glibc's default (128 KB, raised only when a mapped block is freed) the memory a
    /// GET /v1/subscriptions/{id} freed at the top of its event loop's heap went back to the
    /// kernel (`madvise`) after each request, and the next one faulted it in again: 0.8 to 1.8
    /// page faults a read under 64 connections, none for the empty GET; at 4 MB, almost none
    /// (docs/performance.md has the figures). The cost: each of glibc's heaps (at most eight
    /// a core) may keep up to 4 MB it does not use. Setting it also stops glibc from raising the
    /// size from which it maps a block of its own (128 KB), as in the runs measured.
    static let trimThresholdBytes: Int32 = 4 << 20

    /// Called once by `receipt serve`, before its threads start.
    public static func keepFreedMemoryForReuse() {
        _ = glibc_set_trim_threshold(trimThresholdBytes)
    }
}
