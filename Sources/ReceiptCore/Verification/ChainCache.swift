#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A verifier's memory of certificate bags and the chains validated from them.
/// Bounded in entries and bytes; oldest out first. Safe to share across threads:
/// a lookup holds the lock only to scan a few entries.
final class ChainCache: Sendable {
    static let maxEntries = 32
    static let maxBytes = 512 << 10

    private struct Entry {
        let bag: CertificateBag
        /// By signer index: one or two per bag, so a scan beats hashing on every verdict.
        var chains: [(signer: Int, chain: ValidatedChain)] = []

        mutating func remember(_ chain: ValidatedChain, signer: Int) {
            if let index = chains.firstIndex(where: { $0.signer == signer }) {
                chains[index].chain = chain
            } else {
                chains.append((signer, chain))
            }
        }
    }

    private struct State {
        var entries: [Entry] = []
        var bytes = 0
    }

    private let state = Mutex(State())
    /// The verifier's added anchors, decoded once when it was built.
    let known: [X509Certificate]
    /// Lookups of a validated chain that found one, and that did not (statistics only).
    let hits = Atomic<Int>(0)
    let misses = Atomic<Int>(0)

    init(known: [X509Certificate] = []) {
        self.known = known
    }

    /// The bag with exactly these bytes, when its chain validated before.
    func bag(matching bytes: UnsafeBufferPointer<UInt8>) -> CertificateBag? {
        state.withLock { state in state.entries.first { Self.same($0.bag.bytes, bytes) }?.bag }
    }

    func chain(_ bag: CertificateBag, signer: Int) -> ValidatedChain? {
        let found = state.withLock { state in
            state.entries.first { $0.bag === bag }?.chains.first { $0.signer == signer }?.chain
        }
        if found == nil { misses.wrappingAdd(1, ordering: .relaxed) } else { hits.wrappingAdd(1, ordering: .relaxed) }
        return found
    }

    /// Keeps a chain that validated, and its bag. Only validated bags enter: a bag
    /// that anyone can make up (refused, or chained to no anchor) never evicts one.
    func remember(_ chain: ValidatedChain, _ bag: CertificateBag, signer: Int) {
        state.withLock { state in
            if let index = state.entries.firstIndex(where: { $0.bag.bytes == bag.bytes }) {
                state.entries[index].remember(chain, signer: signer)
                return
            }
            guard bag.bytes.count <= Self.maxBytes else { return }
            while state.entries.count >= Self.maxEntries || state.bytes + bag.bytes.count > Self.maxBytes {
                state.bytes -= state.entries.removeFirst().bag.bytes.count
            }
            state.entries.append(Entry(bag: bag, chains: [(signer, chain)]))
            state.bytes += bag.bytes.count
        }
    }

    private static func same(_ known: [UInt8], _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        known.count == bytes.count && !bytes.isEmpty && known.withUnsafeBytes { knownBytes in
            // The tail is a signature: it differs first between distinct bags.
            knownBytes.last == bytes.last && memcmp(knownBytes.baseAddress!, bytes.baseAddress!, bytes.count) == 0
        }
    }
}
