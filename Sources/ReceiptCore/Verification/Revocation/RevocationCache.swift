import Synchronization

/// The OCSP answers a verifier has checked, by certificate (its SHA-256, as the
/// certificate bag computes it once), kept until their nextUpdate and never longer
/// than `maxLifetimeSeconds`. Shared by every thread and by every verifier made
/// with `with(policy:)`, so that a warm verification reads it and asks nothing.
final class RevocationCache: Sendable {
    struct Entry: Sendable {
        let answer: OCSP.Answer
        /// Until when (epoch seconds) the answer counts.
        let expires: Int64
        /// The question it answers, to ask again before it expires (`receipt serve`).
        let query: RevocationQuery
    }

    /// Bounds the memory one verifier gives to answers (a few hundred bytes each).
    static let maxEntries = 4096
    /// An answer counts at most this long, whatever its nextUpdate says.
    static let maxLifetimeSeconds: Int64 = 86_400

    private let entries = Mutex<[[UInt8]: Entry]>([:])
    let hits = Atomic<Int>(0)
    let misses = Atomic<Int>(0)

    /// The answer for `certificate` that still counts at `nowSeconds`.
    func fresh(_ certificate: [UInt8], nowSeconds: Int64) -> Entry? {
        let found = entries.withLock { $0[certificate] }.flatMap { $0.expires > nowSeconds ? $0 : nil }
        if found == nil { misses.add(1, ordering: .relaxed) } else { hits.add(1, ordering: .relaxed) }
        return found
    }

    func store(_ answer: OCSP.Answer, for certificate: [UInt8], query: RevocationQuery, nowSeconds: Int64) {
        let until = min(answer.nextUpdate ?? answer.thisUpdate + OCSP.maxAgeWithoutNextUpdateSeconds,
                        nowSeconds + Self.maxLifetimeSeconds)
        entries.withLock { table in
            if table.count >= Self.maxEntries, table[certificate] == nil {
                table = table.filter { $0.value.expires > nowSeconds }
                if table.count >= Self.maxEntries, let soonest = table.min(by: { $0.value.expires < $1.value.expires }) {
                    table[soonest.key] = nil
                }
            }
            table[certificate] = Entry(answer: answer, expires: until, query: query)
        }
    }

    /// The questions whose answers expire before `nowSeconds + window` (or already have).
    func due(nowSeconds: Int64, window: Int64) -> [RevocationQuery] {
        entries.withLock { table in table.values.filter { $0.expires <= nowSeconds + window }.map(\.query) }
    }
}
