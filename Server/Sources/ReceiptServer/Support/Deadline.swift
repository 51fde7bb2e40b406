/// Work bounded in time: the store's operations (DeadlineStore), readiness, the catch-up's look-ups.
enum Deadline {
    /// `work`, or a DeadlineExceeded error after `seconds`.
    static func within<T: Sendable>(seconds: Int, _ work: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { race in
            race.addTask { try await work() }
            race.addTask { try await Task.sleep(for: .seconds(seconds)); return nil }
            defer { race.cancelAll() }
            guard let first = try await race.next(), let result = first else { throw DeadlineExceeded(seconds: seconds) }
            return result
        }
    }

    struct DeadlineExceeded: Error, CustomStringConvertible {
        let seconds: Int
        var description: String { "no answer within \(seconds) s" }
    }
}
