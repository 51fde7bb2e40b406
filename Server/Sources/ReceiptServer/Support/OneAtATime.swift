import Synchronization

/// Background work of which at most one runs at a time: a start while one runs is dropped (the
/// running one does what it would do), so that a burst of requests makes one piece of work.
final class OneAtATime: Sendable {
    private let running = Atomic<Bool>(false)

    /// Starts `work` in a task of its own unless one is running; true when it started.
    @discardableResult
    func start(_ work: @escaping @Sendable () async -> Void) -> Bool {
        guard running.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else { return false }
        Task {
            await work()
            running.store(false, ordering: .releasing)
        }
        return true
    }
}
