import ReceiptCore

/// Notifications (a store's items: ReceivedNotification) that arrive together are written in
/// one transaction (StoreWrites.record(batch:): each in a savepoint of its own, so that one the
/// store refuses is rolled back alone and its caller told why), then committed once, after which
/// each caller is answered. Nothing is answered before the commit that makes it durable; the
/// wait for that commit is shared by everything that arrived meanwhile, up to `maxBatch`. For a
/// store with one writer (SQLite, whose transactions took turns anyway, each flushing the disk
/// at its commit); PostgreSQL commits concurrent transactions together itself
/// (docs/performance.md has both measured).
actor GroupCommit<Item: Sendable> {
    /// The most notifications one transaction writes.
    let maxBatch: Int

    /// Writes a batch in one transaction: an answer for each notification, in order; throws
    /// when the transaction itself failed (then every notification in it failed).
    typealias Write = @Sendable ([Item]) async throws -> [Result<Bool, any Error>]

    private struct Waiter {
        let id: Int
        let item: Item
        let answer: CheckedContinuation<Bool, any Error>
    }

    /// What waits for the next batch.
    private var waiting: [Waiter] = []
    /// The callers of the batch being written that still wait for it, and its write: a caller
    /// that gives up (its deadline: DeadlineStore) is answered at once, and the write's task is
    /// cancelled when none is left (a transaction the store has begun still finishes:
    /// SQLiteSubscriptionStore runs it in a task of its own).
    private var inFlight: [Int: CheckedContinuation<Bool, any Error>] = [:]
    private var inFlightWrite: Task<[Result<Bool, any Error>], any Error>?
    private var writing = false
    private var nextID = 0

    init(maxBatch: Int = 64) {
        self.maxBatch = max(1, maxBatch)
    }

    /// Whether the notification was new to the store, once the transaction holding it committed;
    /// CancellationError when the caller's task was cancelled first. `write` is the store's: a
    /// GroupCommit belongs to one store, which passes the same every time (a batch is written
    /// with the one the call that started the writing gave).
    func record(_ item: Item, write: @escaping Write) async throws -> Bool {
        let id = nextID
        nextID += 1
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard !Task.isCancelled else { return continuation.resume(throwing: CancellationError()) }
                waiting.append(Waiter(id: id, item: item, answer: continuation))
                if !writing {
                    writing = true
                    Task { await drain(write) }
                }
            }
        } onCancel: {
            Task { await self.giveUp(id) }
        }
    }

    /// The caller `id` no longer waits: answered now, wherever it was (nothing, when answered already).
    private func giveUp(_ id: Int) {
        if let index = waiting.firstIndex(where: { $0.id == id }) {
            waiting.remove(at: index).answer.resume(throwing: CancellationError())
        } else if let answer = inFlight.removeValue(forKey: id) {
            answer.resume(throwing: CancellationError())
            if inFlight.isEmpty { inFlightWrite?.cancel() }
        }
    }

    /// Writes what waits, a batch at a time, until nothing does: what arrives while a batch is
    /// written makes the next.
    private func drain(_ write: @escaping Write) async {
        while !waiting.isEmpty {
            let batch = Array(waiting.prefix(maxBatch))
            waiting.removeFirst(batch.count)
            inFlight = Dictionary(uniqueKeysWithValues: batch.map { ($0.id, $0.answer) })
            let items = batch.map(\.item)
            let task = Task { try await write(items) }
            inFlightWrite = task
            let answers: [Result<Bool, any Error>]
            switch await task.result {
            case .success(let given) where given.count == batch.count: answers = given
            case .success(let given):
                answers = Array(repeating: .failure(AnswersMissing(batch: batch.count, answers: given.count)), count: batch.count)
            case .failure(let error): answers = Array(repeating: .failure(error), count: batch.count)
            }
            inFlightWrite = nil
            for (waiter, answer) in zip(batch, answers) { inFlight.removeValue(forKey: waiter.id)?.resume(with: answer) }
        }
        writing = false
    }
}

/// A batch's write answered fewer or more notifications than it was given: each waiter gets
/// this rather than waiting for ever.
struct AnswersMissing: Error, CustomStringConvertible {
    let batch: Int
    let answers: Int
    var description: String { "a batch of \(batch) notifications got \(answers) answers" }
}
