import Synchronization

/// Online guessing of tokens, slowed per client address: more than `burst` failed credentials
/// within one second refuse that address (429) for a second, and each burst after that for
/// twice as long as the last, up to `longestRefusal`; an address quiet for `forgetAfter` starts
/// again. Only the failing address is refused: the right token keeps working for other clients.
/// At most `maxAddresses` are remembered (those no longer refused are forgotten first).
final class ClientThrottle: Sendable {
    static let burst = 10
    static let firstRefusal: Int64 = 1_000
    static let longestRefusal: Int64 = 15 * 60_000
    static let forgetAfter: Int64 = 15 * 60_000
    static let maxAddresses = 65_536

    private struct Record {
        var windowStart: Int64
        var failures: Int
        var refusedUntil: Int64
        /// The length of the last refusal; 0 before the first.
        var lastRefusal: Int64
    }

    private let records = Mutex<[String: Record]>([:])

    /// Milliseconds until `address` may try again; nil when it may now.
    func refusal(of address: String, now: Int64) -> Int64? {
        records.withLock { records in
            guard let record = records[address], record.refusedUntil > now else { return nil }
            return record.refusedUntil - now
        }
    }

    /// Counts a failed credential from `address`; true when it made the address refused.
    @discardableResult
    func recordFailure(of address: String, now: Int64) -> Bool {
        records.withLock { records in
            if records[address] == nil, records.count >= Self.maxAddresses {
                records = records.filter { $0.value.refusedUntil > now || now - $0.value.windowStart < Self.forgetAfter }
                guard records.count < Self.maxAddresses else { return false }
            }
            var record = records[address] ?? Record(windowStart: now, failures: 0, refusedUntil: 0, lastRefusal: 0)
            if now - record.windowStart >= Self.forgetAfter { record.lastRefusal = 0 }
            if now - record.windowStart >= 1_000 { (record.windowStart, record.failures) = (now, 0) }
            record.failures += 1
            var refused = false
            if record.failures > Self.burst {
                let length = record.lastRefusal == 0 ? Self.firstRefusal : min(Self.longestRefusal, record.lastRefusal * 2)
                (record.refusedUntil, record.lastRefusal, record.failures) = (now + length, length, 0)
                refused = true
            }
            records[address] = record
            return refused
        }
    }
}
