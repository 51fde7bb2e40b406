import Testing
@testable import ReceiptServer

/// GroupCommit: what arrives while a batch is written makes the next batch; each caller gets its
/// own answer, the whole batch the transaction's failure, and a write that answers too few
/// fails its batch rather than leaving a caller waiting.
@Suite struct GroupCommitTests {
    /// The batches a write was given, in order.
    actor Batches {
        var sizes: [[Int]] = []
        func add(_ batch: [Int]) { sizes.append(batch) }
    }

    struct Refused: Error {}

    @Test func whatArrivesDuringAWriteSharesTheNextAndEachGetsItsAnswer() async throws {
        let commits = GroupCommit<Int>(maxBatch: 8)
        let batches = Batches()
        let write: GroupCommit<Int>.Write = { batch in
            await batches.add(batch)
            try await Task.sleep(for: .milliseconds(20))  // a commit's flush
            return batch.map { $0 % 5 == 0 ? .failure(Refused()) : .success($0 % 2 == 0) }
        }
        let answers = await withTaskGroup(of: (Int, Bool?).self) { group in
            for item in 1...30 {
                group.addTask { (item, try? await commits.record(item, write: write)) }
            }
            var answers: [Int: Bool?] = [:]
            for await (item, answer) in group { answers[item] = answer }
            return answers
        }
        for item in 1...30 {
            #expect(answers[item] == (item % 5 == 0 ? nil : item % 2 == 0), "item \(item)")
        }
        let sizes = await batches.sizes
        #expect(sizes.flatMap { $0 }.sorted() == Array(1...30))  // each written once
        #expect(sizes.allSatisfy { $0.count <= 8 })
        #expect(sizes.count < 30)  // items waited for a batch, not each for its own
    }

    @Test func aFailedTransactionFailsItsWholeBatchAndAShortAnswerToo() async throws {
        let commits = GroupCommit<Int>()
        await #expect(throws: Refused.self) { try await commits.record(1) { _ in throw Refused() } }
        await #expect(throws: AnswersMissing.self) { try await commits.record(2) { _ in [] } }
        // And the queue still writes afterwards.
        #expect(try await commits.record(3) { batch in batch.map { _ in .success(true) } })
    }
}

extension GroupCommitTests {
    /// A caller whose task is cancelled (its deadline) is answered at once, and the write it
    /// waited on is cancelled once no caller is left: a database gone away holds nobody.
    @Test func aCallerThatGivesUpIsAnsweredAtOnceAndAnAbandonedWriteCancelled() async throws {
        let commits = GroupCommit<Int>()
        let cancelled = Batches()
        // As a store's: one write for every call; item 1's database does not answer.
        let write: GroupCommit<Int>.Write = { batch in
            if batch.contains(1) {
                do {
                    try await Task.sleep(for: .seconds(60))
                } catch {
                    await cancelled.add(batch)
                    throw error
                }
            }
            return batch.map { _ in .success(true) }
        }
        let caller = Task { try await commits.record(1, write: write) }
        try await Task.sleep(for: .milliseconds(50))
        let started = ContinuousClock.now
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
        #expect(ContinuousClock.now - started < .seconds(5))
        for _ in 0..<100 where await cancelled.sizes.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
        #expect(await cancelled.sizes == [[1]])
        #expect(try await commits.record(2, write: write))
        #expect(ContinuousClock.now - started < .seconds(5))
    }
}
