import Logging
import Testing
@testable import ReceiptServer

/// AuditedMoves: the audited store's moves of each subscription merged with those the JWS alone
/// make, page by page, every row that differs told once, in key order.
@Suite struct AuditedMovesTests {
    typealias Move = (subscription: String, day: Int64, move: String, twelfths: Int64)

    static func insert(_ moves: [Move], into store: any SubscriptionStore) async throws {
        try await store.withStatements(transaction: true) { statements in
            for move in moves {
                _ = try await statements.run("""
                    INSERT INTO \(SubscriptionMoves.table) (original_transaction_id, day, currency, move, product_id, moves, twelfths)
                    VALUES (?1, ?2, 'EUR', ?3, 'p', 1, ?4)
                    """, [.text(move.subscription), .integer(move.day), .text(move.move), .integer(move.twelfths)])
            }
        }
    }

    /// Two stores of the latest schema, empty, given to `work`.
    static func twoStores(_ work: @escaping @Sendable (any SubscriptionStore, any SubscriptionStore) async throws -> Void) async throws {
        let logger = Logger(label: "audited-moves-test")
        try await ScratchStore.with(logger: logger) { held in
            try await held.derive()
            try await ScratchStore.with(logger: logger) { recomputed in
                try await recomputed.derive()
                try await work(held.store, recomputed.store)
            }
        }
    }

    @Test func aRowOfOneStoreAloneOrOfOtherCountsIsToldOnceInKeyOrder() async throws {
        try await Self.twoStores { held, recomputed in
            // Ids whose text order is not their numbers' ("10" before "9"), two moves a subscription, read 3 rows a page.
            var common: [Move] = []
            for id in 1...20 {
                let (day, twelfths) = (Int64(100 + id), Int64(12 * id))
                common.append((String(id), day, "new", twelfths))
                common.append((String(id), day + 30, "churned", -twelfths))
            }
            let changed: [Move] = common.map { move in
                move.subscription == "14" && move.move == "churned" ? (move.subscription, move.day, move.move, move.twelfths - 12) : move
            }
            try await Self.insert(changed.filter { $0.subscription != "3" } + [("7", 150, "reactivation", 60)], into: held)
            try await Self.insert(common, into: recomputed)
            // A row whose move was taken back (0 moves, 0 twelfths) is none.
            try await held.withStatements(transaction: false) {
                _ = try await $0.run("INSERT INTO \(SubscriptionMoves.table) VALUES ('8', 1, 'EUR', 'new', 'p', 0, 0)", [])
            }
            let found = try await AuditedMoves.differences(held: held, recomputed: recomputed, page: 3)
            #expect(found.lines == [
                "subscription_moves 14 144 EUR churned p: the store holds moves 1, twelfths -180, the JWS alone give moves 1, twelfths -168",
                "subscription_moves 3 103 EUR new p: the store holds none, the JWS alone give moves 1, twelfths 36",
                "subscription_moves 3 133 EUR churned p: the store holds none, the JWS alone give moves 1, twelfths -36",
                "subscription_moves 7 150 EUR reactivation p: the store holds moves 1, twelfths 60, the JWS alone give none",
            ] && found.more == 0, "\(found.lines)")
            // The same stores agree with themselves, whatever the page; past maxPrinted, the rest are counted.
            #expect(try await AuditedMoves.differences(held: recomputed, recomputed: recomputed, page: 1).lines.isEmpty)
            let capped = try await AuditedMoves.differences(held: held, recomputed: recomputed, page: 2, maxPrinted: 1)
            #expect(capped.lines.count == 1 && capped.more == 3)
        }
    }
}
