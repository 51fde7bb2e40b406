/// Runs async work one at a time, in arrival order: a store's transaction on its one
/// write connection must not interleave with another's BEGIN … COMMIT.
actor SerialGate {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func run<T: Sendable>(_ work: @Sendable () async throws -> T) async throws -> T {
        if busy {
            await withCheckedContinuation { waiting.append($0) }
        } else {
            busy = true
        }
        defer { handOn() }
        return try await work()
    }

    /// Lets the next waiter in (it inherits `busy`), or frees the gate.
    private func handOn() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
    }
}
