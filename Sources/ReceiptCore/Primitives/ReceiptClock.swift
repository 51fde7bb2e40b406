#if canImport(Glibc)
import Glibc
#endif

/// The project's clock: now, in milliseconds since 1970 (UTC), the unit of every signed date.
/// `systemNow()` is the one place that reads the system's time; what decides by the time takes
/// the instant as an argument, or a `ReceiptClock`, so that a test gives its own.
public struct ReceiptClock: Sendable {
    private let read: @Sendable () -> Int64

    public init(_ read: @escaping @Sendable () -> Int64) { self.read = read }

    /// Now, by this clock.
    public func now() -> Int64 { read() }

    /// The system's clock.
    public static let system = ReceiptClock(systemNow)

    /// The system's time (CLOCK_REALTIME), in milliseconds since 1970.
    public static func systemNow() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
