import Synchronization
import Testing
@testable import ReceiptServer

/// ServerReadiness: "listening on" is announced once, when the port is bound and the store is
/// ready, in whichever order they come; without a store, at the binding.
@Suite struct ServerReadinessTests {
    final class Announced: Sendable {
        let ports = Mutex<[Int]>([])
        var seen: [Int] { ports.withLock { $0 } }
        func add(_ port: Int) { ports.withLock { $0.append(port) } }
    }

    @Test func theStoreReadyAfterTheBindingAnnouncesThenAndOnce() {
        let announced = Announced()
        let readiness = ServerReadiness(storeReady: false, announce: announced.add)
        readiness.bound(port: 8080)
        #expect(!readiness.isReady && announced.seen.isEmpty)
        readiness.storeIsReady()
        readiness.storeIsReady()
        #expect(readiness.isReady && announced.seen == [8080])
    }

    @Test func theBindingAfterTheStoreReadyAnnouncesThen() {
        let announced = Announced()
        let readiness = ServerReadiness(storeReady: false, announce: announced.add)
        readiness.storeIsReady()
        #expect(readiness.isReady && announced.seen.isEmpty)
        readiness.bound(port: 9090)
        #expect(announced.seen == [9090])
    }

    @Test func withoutAStoreTheBindingAnnounces() {
        let announced = Announced()
        let readiness = ServerReadiness(storeReady: true, announce: announced.add)
        #expect(readiness.isReady)
        readiness.bound(port: 1)
        #expect(announced.seen == [1])
    }
}
