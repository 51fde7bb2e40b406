/// How the in-process benches (`receipt bench-store`, `receipt bench-routes`) time what they time.
enum BenchTiming {
    /// Medians of `samples` batches of `calls` calls by each of `concurrency` tasks, in
    /// nanoseconds of elapsed time per call.
    static func median(_ samples: Int, _ calls: Int, _ concurrency: Int,
                       _ body: @escaping @Sendable () async throws -> Void) async throws -> Int64 {
        let clock = ContinuousClock()
        let calls = max(1, calls)
        var results: [Int64] = []
        for _ in 0..<max(1, samples) {
            let start = clock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<concurrency { group.addTask { for _ in 0..<calls { try await body() } } }
                try await group.waitForAll()
            }
            let (seconds, attoseconds) = (clock.now - start).components
            results.append((seconds * 1_000_000_000 + attoseconds / 1_000_000_000) / Int64(calls * concurrency))
        }
        return results.sorted()[results.count / 2]
    }
}
