import Synchronization

/// Stored JWS decoded once for the process: an event reads its subscription's and account's
/// latest rows (StoreEvent.After), most of which the previous event of the same customer read
/// and decoded, so that a notification decodes what is new to it rather than some forty rows.
/// A token is found by its signature, then compared whole, so that no other token's payload
/// is ever returned for it. At most `capacity` are kept, all forgotten at once when full:
/// the memory is bounded whatever is stored.
enum StoredPayloadCache {
    static let capacity = 512

    private static let entries = Mutex<[Substring: (token: String, payload: SignedPayload)]>([:])

    /// The token's payload as `SignedPayload.decodeVerifiedBefore` gives it (only for rows that
    /// verified when they arrived); nil when it does not decode.
    static func decoded(_ token: String) -> SignedPayload? {
        let signature = token.utf8.lastIndex(of: UInt8(ascii: ".")).map { token[token.utf8.index(after: $0)...] }
            ?? Substring(token)
        if let known = entries.withLock({ $0[signature] }), known.token == token { return known.payload }
        guard let payload = try? SignedPayload.decodeVerifiedBefore(token) else { return nil }
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[signature] = (token, payload)
        }
        return payload
    }

    /// How many are kept now (tests).
    static var count: Int { entries.withLock { $0.count } }
}
