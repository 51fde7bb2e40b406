import ReceiptCore
import Synchronization

/// Lets at most `perMinute` log lines of one kind through in each minute, so that
/// what anyone may cause (a flood of forged notifications) cannot flood the log.
final class RateLimitedLog: Sendable {
    private let perMinute: Int
    /// (the minute, lines let through in it)
    private let window = Mutex<(minute: Int64, count: Int)>((0, 0))

    init(perMinute: Int) {
        self.perMinute = perMinute
    }

    /// Whether one more line may be written now.
    func allow() -> Bool {
        let minute = ReceiptClock.systemNow() / 60_000
        return window.withLock { state in
            if state.minute != minute { state = (minute, 0) }
            state.count += 1
            return state.count <= perMinute
        }
    }
}
