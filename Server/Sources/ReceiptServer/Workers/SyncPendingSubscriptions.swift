/// The subscriptions a `receipt sync` has named and still has to pull, saved in the store's
/// settings so that a run cut off goes on where it stopped. Each step saves only what it
/// changed, so a step costs the same however many subscriptions came before it:
/// - each page of notification history saves the ids it names for the first time, under a
///   key of its own (`namedPrefix` and the page's number);
/// - the transaction histories are pulled in sorted order, and each saves only the last id
///   done (`doneKey`).
/// Earlier builds saved the whole list, sorted, at every step: a quadratic amount of writing
/// (3.3 MB a page at 200,000 subscriptions, about 33 GB for the notification history alone).
/// A store such a build left mid-sync (`previousReleaseKey`) is read too, so that run goes on.
struct SyncPendingSubscriptions {
    static let namedPrefix = "sync.subscriptions_named."
    static let doneKey = "sync.subscriptions_done_through"
    static let previousReleaseKey = "sync.subscriptions_pending"

    /// Every id named so far.
    private(set) var named: Set<String> = []
    /// Pages saved under `namedPrefix`: the next one is numbered `pagesSaved + 1`.
    private var pagesSaved = 0
    /// The last id whose transaction history was pulled, in `toPull`'s order.
    private var doneThrough: String?

    /// What the store holds (nothing after `clear`).
    static func load(from store: any SubscriptionStore) async throws -> Self {
        let rows = try await store.withStatements(transaction: false) { statements in
            try await statements.run("SELECT key, value FROM settings WHERE \(savedKeys(statements.dialect))", savedKeysBinds)
        }
        var pending = Self()
        for row in rows {
            guard row.count == 2, let key = row[0].text, let value = row[1].text else { continue }
            if key == doneKey {
                pending.doneThrough = value.isEmpty ? nil : value
                continue
            }
            if key != previousReleaseKey { pending.pagesSaved += 1 }
            pending.named.formUnion(value.split(separator: ",").map(String.init))
        }
        return pending
    }

    /// Removes every key a sync saved its subscriptions under, in one transaction.
    static func clear(in store: any SubscriptionStore) async throws {
        _ = try await store.withStatements(transaction: true) { statements in
            try await statements.run("DELETE FROM settings WHERE \(savedKeys(statements.dialect))", savedKeysBinds)
        }
    }

    /// The condition on `settings.key` that picks every key of a sync's subscriptions, bound to
    /// `savedKeysBinds`. `substr` rather than LIKE, in which `_` is a wildcard.
    private static func savedKeys(_ dialect: StoreDialect) -> String {
        let (prefix, previous, done) = (dialect.placeholder(1), dialect.placeholder(2), dialect.placeholder(3))
        return "substr(key, 1, \(namedPrefix.utf8.count)) = \(prefix) OR key = \(previous) OR key = \(done)"
    }

    /// `savedKeys`'s binds: the prefix, then the two single keys.
    private static var savedKeysBinds: [StoreValue] { [.text(namedPrefix), .text(previousReleaseKey), .text(doneKey)] }

    /// Adds one page's ids, saving those not named before (nothing when there are none).
    mutating func add(_ ids: some Sequence<String>, in store: any SubscriptionStore) async throws {
        let new = Set(ids).subtracting(named)
        guard !new.isEmpty else { return }
        try await store.setSetting(Self.namedPrefix + String(pagesSaved + 1), new.sorted().joined(separator: ","))
        pagesSaved += 1
        named.formUnion(new)
    }

    /// The ids whose transaction histories are still to pull, in the order they are pulled.
    var toPull: [String] {
        let all = named.sorted()
        guard let doneThrough else { return all }
        return all.filter { $0 > doneThrough }
    }

    /// Saves that `id` (of `toPull`) and every id before it are pulled.
    mutating func markPulled(_ id: String, in store: any SubscriptionStore) async throws {
        try await store.setSetting(Self.doneKey, id)
        doneThrough = id
    }
}
