import Synchronization

/// Whether the server may use its store yet. A server listens before its store is migrated: a
/// migration reads every row once (minutes on a large store), and a server that did not answer
/// meanwhile would be taken for dead and restarted by its supervisor. Until the store is ready
/// (migrated, its claim checked, the server's webhooks registered), `/healthz` answers, `/readyz`
/// and every request that needs the store answer 503 STORE_MIGRATING, and a verifyReceipt whose
/// receipt holds subscriptions the store would merge answers Apple's retry status.
///
/// The caller's `announce` (the CLI's "listening on HOST:PORT" line) comes once the port is
/// bound *and* the store is ready, so that a script that waits for it may use every route.
final class ServerReadiness: Sendable {
    private let ready: Atomic<Bool>
    /// The port bound, once it is; whether `announce` was called.
    private let announcement = Mutex<(port: Int?, announced: Bool)>((nil, false))
    private let announce: @Sendable (Int) -> Void

    /// `storeReady`: true for a server without a store.
    init(storeReady: Bool, announce: @escaping @Sendable (Int) -> Void) {
        ready = Atomic(storeReady)
        self.announce = announce
    }

    var isReady: Bool { ready.load(ordering: .acquiring) }

    /// The listener is bound to `port`.
    func bound(port: Int) {
        announcement.withLock { $0.port = port }
        announceWhenDue()
    }

    /// The store is migrated and the server's webhooks registered: requests may use it.
    func storeIsReady() {
        ready.store(true, ordering: .releasing)
        announceWhenDue()
    }

    private func announceWhenDue() {
        let port: Int? = announcement.withLock { state in
            guard isReady, !state.announced, let port = state.port else { return nil }
            state.announced = true
            return port
        }
        if let port { announce(port) }
    }
}
