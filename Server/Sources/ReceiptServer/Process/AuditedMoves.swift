import ReceiptCore

/// The audit's check of each subscription's MRR moves (SubscriptionMoves), which the lists of moves
/// read and no figure does: the store's rows that hold a move against those the JWS alone make (the
/// scratch store's), both read a page at a time in one order, bytewise (`StoreDialect.collate`),
/// and merged, so that what it holds in memory does not grow with the store.
struct AuditedMoves {
    /// Rows read at once from each store.
    static let page = 5_000
    /// Differences printed at most; the rest are counted.
    static let maxPrinted = 1_000

    /// A row: its key (subscription, day, currency, kind, product) and its counts.
    struct Row: Equatable {
        let subscription: String
        let day: Int64
        let currency: String
        let move: String
        let product: String
        let moves: Int64
        let twelfths: Int64

        /// Before `other` in the order both stores are read in: text bytewise, the day as a number.
        func precedes(_ other: Row) -> Bool {
            if subscription != other.subscription { return subscription.utf8.lexicographicallyPrecedes(other.subscription.utf8) }
            if day != other.day { return day < other.day }
            for (mine, theirs) in [(currency, other.currency), (move, other.move), (product, other.product)] where mine != theirs {
                return mine.utf8.lexicographicallyPrecedes(theirs.utf8)
            }
            return false
        }

        func hasKey(of other: Row) -> Bool {
            (subscription, day, currency, move, product) == (other.subscription, other.day, other.currency, other.move, other.product)
        }

        var keyText: String {
            [subscription, String(day), currency, move, product].map(StoredRowCheck.printable).joined(separator: " ")
        }

        var countsText: String { "moves \(moves), twelfths \(twelfths)" }
    }

    /// What differs, as lines to print (at most `maxPrinted`), and how many more differ.
    struct Differences {
        let maxPrinted: Int
        var lines: [String] = []
        var more = 0

        mutating func add(_ line: String) {
            if lines.count < maxPrinted { lines.append(line) } else { more += 1 }
        }
    }

    /// The rows of `held` (the store audited) and of `recomputed` (made from its JWS) that differ,
    /// in key order, each store read `page` rows at a time.
    static func differences(held: any SubscriptionStore, recomputed: any SubscriptionStore, page: Int = page,
                            maxPrinted: Int = maxPrinted) async throws -> Differences {
        var (mine, theirs) = (Reader(store: held, page: page), Reader(store: recomputed, page: page))
        var found = Differences(maxPrinted: maxPrinted)
        let table = SubscriptionMoves.table
        while true {
            try Task.checkCancellation()
            let (a, b) = (try await mine.peek(), try await theirs.peek())
            switch (a, b) {
            case (nil, nil):
                return found
            case (let a?, let b?) where a.hasKey(of: b):
                if a != b { found.add("\(table) \(a.keyText): the store holds \(a.countsText), the JWS alone give \(b.countsText)") }
                mine.advance()
                theirs.advance()
            case (let a?, let b) where b.map(a.precedes) ?? true:
                found.add("\(table) \(a.keyText): the store holds \(a.countsText), the JWS alone give none")
                mine.advance()
            case (_, let b?):
                found.add("\(table) \(b.keyText): the store holds none, the JWS alone give \(b.countsText)")
                theirs.advance()
            default:
                return found  // unreachable: a nil beside a row is taken above
            }
        }
    }

    /// One store's rows that hold a move, a page at a time.
    private struct Reader {
        let store: any SubscriptionStore
        let page: Int
        var rows: [Row] = []
        var next = 0
        var ended = false

        /// The next row, read with the next page when this one is done; nil after the last.
        mutating func peek() async throws -> Row? {
            if next == rows.count, !ended {
                let last = rows.last
                let read: Int
                (rows, read) = try await AuditedMoves.page(of: store, after: last, limit: page)
                next = 0
                ended = read < page
                // A key read back otherwise than it is held (sqlite-nio ends text at a NUL) would read the same rows again.
                if let last, let first = rows.first, !last.precedes(first) {
                    throw ReceiptServer.AuditRefused(description: "\(SubscriptionMoves.table) holds a key that cannot be read back "
                                                                  + "as it is held, near \(last.keyText)")
                }
            }
            return next < rows.count ? rows[next] : nil
        }

        mutating func advance() { next += 1 }
    }

    /// At most `limit` rows of `store` that hold a move (or an amount), after `after`, in key order
    /// bytewise, and how many were read (a row whose columns are not of their types is left out: the
    /// other store's row of that key is then told as missing).
    static func page(of store: any SubscriptionStore, after: Row?, limit: Int) async throws -> (rows: [Row], read: Int) {
        try await store.withStatements(transaction: false) { statements in
            let d = statements.dialect
            let key = ["original_transaction_id\(d.collate)", "day", "currency\(d.collate)", "move\(d.collate)", "product_id\(d.collate)"]
            var conditions = ["(moves <> 0 OR twelfths <> 0)"]
            var binds: [StoreValue] = []
            if let after {
                binds = [.text(after.subscription), .integer(after.day), .text(after.currency), .text(after.move), .text(after.product)]
                conditions.append("(\(key.joined(separator: ", "))) > (\(d.placeholders(1...5).joined(separator: ", ")))")
            }
            let rows = try await statements.run("""
                SELECT original_transaction_id, day, currency, move, product_id, moves, twelfths FROM \(SubscriptionMoves.table)
                WHERE \(conditions.joined(separator: " AND ")) ORDER BY \(key.joined(separator: ", ")) LIMIT \(max(1, limit))
                """, binds)
            return (rows.compactMap { row in
                guard row.count == 7, let subscription = row[0].text, let day = row[1].integer, let currency = row[2].text,
                      let move = row[3].text, let product = row[4].text, let moves = row[5].integer, let twelfths = row[6].integer
                else { return nil }
                return Row(subscription: subscription, day: day, currency: currency, move: move, product: product, moves: moves,
                           twelfths: twelfths)
            }, rows.count)
        }
    }
}
