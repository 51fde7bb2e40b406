import Synchronization

/// The JWS chains that validated in this process, shared by every verifier: a verifier
/// made for each request (as many backends make one) finds the chain of Apple's leaf of
/// the day that an earlier verifier validated, instead of checking its P-384 signatures
/// again (most of a fresh verifier's cost).
///
/// What a chain's validation depends on is all in the key: the x5c bytes (the bag) and
/// the anchor the verifier chose for it (its DER and the name the verdict reports, which
/// says whether it is the pinned Apple Root CA - G3 or an added anchor, re-issued or not);
/// the instant is checked against the validated window as in a verifier's own cache. So
/// a verifier reuses only a chain it would have validated itself with the same answer; it
/// still chooses its anchor from its own trust before looking. Only validated chains enter
/// (ChainCache.remember), each anchor's cache bounded as a verifier's is, and at most
/// `maxAnchors` anchors are kept, the least recently added given up first.
enum SharedJWSChains {
    static let maxAnchors = 8

    private static let caches = Mutex<[(anchor: [UInt8], cache: ChainCache)]>([])

    /// A decoded bag with exactly these x5c bytes whose chain validated for some verifier.
    static func bag(matching key: UnsafeBufferPointer<UInt8>) -> CertificateBag? {
        for cache in caches.withLock({ $0.map(\.cache) }) {
            if let bag = cache.bag(matching: key) { return bag }
        }
        return nil
    }

    /// The chain validated for `bag` to the anchor `anchor` (anchorKey), holding at `seconds`.
    static func chain(_ bag: CertificateBag, anchor: [UInt8], atEpochSeconds seconds: Int64) -> ValidatedChain? {
        guard let cache = caches.withLock({ $0.first { $0.anchor == anchor }?.cache }),
              let chain = cache.chain(bag, signer: ReceiptVerifier.jwsChainSlot), chain.holds(atEpochSeconds: seconds) else {
            return nil
        }
        return chain
    }

    static func remember(_ chain: ValidatedChain, _ bag: CertificateBag, anchor: [UInt8]) {
        let cache = caches.withLock { caches in
            if let known = caches.first(where: { $0.anchor == anchor }) { return known.cache }
            if caches.count >= maxAnchors { caches.removeFirst(caches.count - maxAnchors + 1) }
            caches.append((anchor, ChainCache()))
            return caches[caches.count - 1].cache
        }
        cache.remember(chain, bag, signer: ReceiptVerifier.jwsChainSlot)
    }

    /// What a chain is shared by: the anchor's name as the verdict reports it, and its DER.
    static func anchorKey(name: String, der: [UInt8]) -> [UInt8] {
        Array(name.utf8) + [0] + der
    }
}
