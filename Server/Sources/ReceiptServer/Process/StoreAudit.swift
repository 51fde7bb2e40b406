#if canImport(Glibc)
import Glibc
#endif
import Logging
import PostgresNIO
import ReceiptCore

/// `receipt audit`: checks that a store's figures can be traced to Apple's signatures. Every
/// stored JWS is verified again (the pinned anchors at its signing, the store's app and
/// environment), every column a JWS gives is compared with the column held (StoredRowCheck),
/// and every figure is computed twice, from the store as it is and from a scratch store made
/// from the verified JWS alone (ScratchStore; the same figures as `receipt serve`), the answers
/// compared line by line (FigureComparison); the MRR movement also as each subscription's moves
/// add it up (SubscriptionMoves), which the lists of moves read. Each difference is reported as it is found.
extension ReceiptServer {
    public struct AuditSummary: Sendable {
        /// Rows checked, by table, in the order checked.
        public var rows: [(table: String, count: Int)] = []
        /// Figures computed on both stores and compared.
        public var figures = 0
        /// Rows and figure lines reported.
        public var differences = 0
    }

    /// Audits the store at `storeLocation` with `verifier`'s trust, without changing it: a store
    /// missing, or of another schema version than this build's, is refused (StoreOpenError). Its
    /// policy's bundle ids and environment, when it names both, are the ones every JWS must name;
    /// otherwise the store's claim (StoreIdentity) is, and `progress` says so: a claim is a row of
    /// the store audited, which whoever could change the rows could change too.
    public static func audit(storeLocation: StoreLocation, verifier: ReceiptVerifier, now: Int64, logger: Logger,
                             report: @escaping @Sendable (String) -> Void,
                             progress: @escaping @Sendable (String) -> Void) async throws -> AuditSummary {
        do {
            return try await withStore(storeLocation, preparing: .checkVersion, logger: logger) { store in
                let checked = try await auditVerifier(verifier, claim: try await store.setting(StoreIdentity.settingKey),
                                                      progress: progress)
                return try await ScratchStore.with(logger: logger) { scratch in
                    try await StoreAudit(store: store, scratch: scratch, verifier: checked, now: now, report: report,
                                         progress: progress).run()
                }
            }
        } catch let problem as PSQLError {
            // PostgresNIO describes none of its errors (they might hold data); the server's own words hold none.
            let info = problem.serverInfo
            throw AuditRefused(description: "PostgreSQL: \(info?[.message] ?? "\(problem.code)") (SQLSTATE \(info?[.sqlState] ?? "none"))")
        }
    }

    /// An audit that cannot be made: the store names no app and environment, and none was given.
    public struct AuditRefused: Error, CustomStringConvertible {
        public let description: String
    }

    private static func auditVerifier(_ verifier: ReceiptVerifier, claim text: String?,
                                      progress: @Sendable (String) -> Void) async throws -> ReceiptVerifier {
        var policy = verifier.policy
        if let bundleID = policy.bundleID, let environment = policy.environment {
            progress("every JWS must name \(([bundleID] + policy.otherBundleIDs).joined(separator: " or ")) "
                     + "in \(environment.signedName) (--bundle-id, --environment)")
            return verifier
        }
        guard let claim = text.flatMap(StoreIdentity.Claim.init(text:)), let environment = ReceiptEnvironment(signedName: claim.environment),
              let first = claim.bundleIDs.sorted().first else {
            throw AuditRefused(description: "the store names no app and environment (no server has claimed it): "
                                            + "give --bundle-id and --environment")
        }
        policy.bundleID = first
        policy.otherBundleIDs = Array(claim.bundleIDs.sorted().dropFirst())
        policy.environment = environment
        let named = claim.bundleIDs.sorted().map(StoredRowCheck.printable).joined(separator: " or ")
        progress("every JWS must name \(named) in \(StoredRowCheck.printable(claim.environment)): the "
                 + "store's own claim, which whoever could change its rows could change too; give --bundle-id and "
                 + "--environment to check against yours")
        return verifier.with(policy: policy)
    }
}

/// A table of rows signed by Apple: its key, its columns, the kind of its JWS, and the columns'
/// values as a verified JWS gives them (nil: a column the JWS does not give).
struct AuditedTable: Sendable {
    let name: String
    let key: String
    let columns: [String]
    /// The columns of whole numbers (the others are text): PostgreSQL's types, which a value read must keep.
    let integerColumns: Set<String>
    let kind: SignedPayloadKind
    let signed: @Sendable (SignedPayload) -> [StoredFact?]?

    var jwsColumn: Int { columns.firstIndex(of: "jws")! }

    /// The most bytes of a column read (a JWS, any other): a store's rows bounded as the server's input
    /// is, whatever was written into the database by hand. A longer value reads as a text saying so.
    static let maxJWSBytes = 64 << 10
    static let maxColumnBytes = 4 << 10

    /// The expression that reads `column`, bounded (SQLite's columns take any type, PostgreSQL's text ones are text).
    func read(_ column: String, _ d: StoreDialect) -> String {
        let limit = column == "jws" ? Self.maxJWSBytes : Self.maxColumnBytes
        let longer = "'(longer than \(limit) bytes)'"
        switch d {
        case .sqlite: return "CASE WHEN length(CAST(\(column) AS BLOB)) > \(limit) THEN \(longer) ELSE \(column) END"
        case .postgres:
            return integerColumns.contains(column) ? column : "CASE WHEN octet_length(\(column)) > \(limit) THEN \(longer) ELSE \(column) END"
        }
    }

    private static func wholeNumbers(_ facts: [FactColumn]) -> Set<String> {
        Set(["signed_date"] + facts.filter { $0.kind != .text }.map(\.name))
    }

    static let all = [
        AuditedTable(name: "transactions", key: "transaction_id", columns: StoredTransaction.columnNames,
                     integerColumns: wholeNumbers(StoredFacts.transactionColumns), kind: .transaction,
                     signed: { StoredTransaction(verified: $0)?.columnValues }),
        AuditedTable(name: "renewal_infos", key: "original_transaction_id", columns: StoredRenewalInfo.columnNames,
                     integerColumns: wholeNumbers(StoredFacts.renewalInfoColumns), kind: .renewalInfo,
                     signed: { StoredRenewalInfo(verified: $0)?.columnValues }),
        // The notification's UUID and signing date come from the notification, which the store does not keep.
        AuditedTable(name: "consent_rescissions", key: "app_transaction_id",
                     columns: StoredConsentRescission.columnNames, integerColumns: ["signed_date"],
                     kind: .appTransaction, signed: { payload in
                         payload.string("appTransactionId").map { [.text($0), nil, nil, .text(payload.compactSerialization)] }
                     }),
    ]
}

/// One audit's work (ReceiptServer.audit).
struct StoreAudit: Sendable {
    let store: any SubscriptionStore
    let scratch: ScratchStore
    let verifier: ReceiptVerifier
    let now: Int64
    let report: @Sendable (String) -> Void
    /// Where the audit stands, every `progressInterval` at most: a large store takes minutes.
    let progress: @Sendable (String) -> Void

    static let progressInterval: Int64 = 10_000
    /// Rows read, checked and written to the scratch store at once.
    static let page = 500

    func run() async throws -> ReceiptServer.AuditSummary {
        var summary = ReceiptServer.AuditSummary()
        var toldAt = ReceiptClock.systemNow()
        // A page's rows go to the scratch store while the next page is read and verified.
        var adding: Task<Void, any Error>?
        do {
            for table in AuditedTable.all {
                var count = 0
                var after: StoreValue?
                while true {
                    let rows = try await store.withStatements(transaction: false) { [after] statements in
                        let d = statements.dialect
                        let page = d.page(of: table.name, key: table.key, columns: table.columns.map { table.read($0, d) },
                                          after: after, limit: Self.page)
                        return try await statements.run(page.sql, page.binds)
                    }
                    guard let last = rows.last else { break }
                    after = last[0]
                    let checked = await Self.check(rows.map { Array($0.dropFirst()) }, of: table, by: verifier)
                    var verified: [SignedPayload] = []
                    for (row, outcome) in zip(rows, checked) {
                        let key = StoredRowCheck.printable(row[1].text ?? row[1].integer.map(String.init) ?? "NULL")
                        switch outcome {
                        case .success(let (payload, findings)):
                            verified.append(payload)
                            for finding in findings { note("\(table.name) \(key): \(finding)", &summary) }
                        case .failure(let finding):
                            note("\(table.name) \(key): \(finding)", &summary)
                        }
                    }
                    let transactions = verified.compactMap(StoredTransaction.init(verified:))
                    let renewalInfos = verified.compactMap(StoredRenewalInfo.init(verified:))
                    try await adding?.value
                    adding = Task { [scratch] in try await scratch.add(transactions, renewalInfos) }
                    count += rows.count
                    if ReceiptClock.systemNow() - toldAt >= Self.progressInterval {
                        toldAt = ReceiptClock.systemNow()
                        progress("\(count) \(table.name) checked, \(summary.differences) differences so far")
                    }
                    if rows.count < Self.page { break }
                }
                // The pages read every row once: a count that differs is a store changing under the audit.
                let held = try await store.withStatements(transaction: false) {
                    try await $0.run("SELECT count(*) FROM \(table.name)", []).first?.first?.integer ?? -1
                }
                if held != Int64(count) {
                    note("\(table.name): \(held) rows held, \(count) read: the store changed during the audit", &summary)
                }
                summary.rows.append((table.name, count))
            }
            try await adding?.value
        } catch {
            adding?.cancel()
            _ = await adding?.result
            throw error
        }
        progress("every row checked; the figures' tables made from the JWS and every figure computed twice")
        try await scratch.derive()
        var products = try await Self.products(in: store).union(try await Self.products(in: scratch.store))
        let refused = products.filter { !FigureQuery.takes(product: $0) }
        for product in refused.sorted() {
            note("figures per product: the store names a product no figure takes (\(StoredRowCheck.printable(product)))", &summary)
        }
        products.subtract(refused)
        if products.count > Self.maxProducts {
            note("figures per product: the stores name more than \(Self.maxProducts) products; the first \(Self.maxProducts) "
                 + "compared", &summary)
        }
        for (name, parameters) in figureQueries(products: Array(products.sorted().prefix(Self.maxProducts))) {
            let figure = try StatsController.query(name, parameters.map { (key: Substring($0), value: Substring($1)) }, now: now)
            async let held = StatsController.answer(name, figure, csv: true, on: store)
            async let recomputed = StatsController.answer(name, figure, csv: true, on: scratch.store)
            let asked = parameters.map { "\($0)=\($1)" }.joined(separator: "&")
            let recomputedAnswer = try await recomputed
            compare(try await held, recomputedAnswer, as: "figure \(name)?\(asked)", &summary)
            // The MRR movement again from each subscription's moves, which the lists of moves read and no figure does.
            if name == "mrr_movement" {
                let label = "figure \(name)?\(asked) (each subscription's moves)"
                do {
                    let eachMoves = try await store.mrrMovement(intervals: figure.firstDays, readDays: figure.readDays, from: .subscriptions)
                    compare(StatsCSV.mrrMovement(eachMoves), recomputedAnswer, as: label, &summary)
                } catch is CancellationError {
                    throw CancellationError()
                } catch {
                    // Counts set by hand past 64 bits stop the adding up (SQLite's and PostgreSQL's overflow errors).
                    note("\(label): the store's rows cannot be added up: \(StoredRowCheck.printable(String(describing: error)))", &summary)
                }
            }
            summary.figures += 1
        }
        let irregular = try await store.withStatements(transaction: false) { try await SubscriptionMoves.irregularRows(on: $0) }
        if irregular > 0 {
            note("\(SubscriptionMoves.table): \(irregular) rows hold other than one move or none, which no write leaves", &summary)
        }
        return summary
    }

    /// Notes each line only one answer has, under `label`.
    private func compare(_ held: [UInt8], _ recomputed: [UInt8], as label: String, _ summary: inout ReceiptServer.AuditSummary) {
        let (onlyHeld, onlyRecomputed) = FigureComparison.differences(held: held, recomputed: recomputed)
        for line in onlyHeld { note("\(label): the store's rows give \(StoredRowCheck.printable(line))", &summary) }
        for line in onlyRecomputed { note("\(label): the JWS alone give \(StoredRowCheck.printable(line))", &summary) }
    }

    private func note(_ line: String, _ summary: inout ReceiptServer.AuditSummary) {
        summary.differences += 1
        report(line)
    }

    /// Each row's verified payload and the columns that differ from it, or why it did not verify;
    /// the rows verified on every core, in order.
    private static func check(_ rows: [[StoreValue]], of table: AuditedTable, by verifier: ReceiptVerifier) async
        -> [Result<(SignedPayload, [StoredRowCheck.Finding]), StoredRowCheck.Finding>] {
        let parts = max(1, min(Processors.online, rows.count))
        let size = (rows.count + parts - 1) / parts
        return await withTaskGroup(of: (Int, [Result<(SignedPayload, [StoredRowCheck.Finding]), StoredRowCheck.Finding>]).self) { group in
            for start in stride(from: 0, to: rows.count, by: size) {
                let part = rows[start..<min(start + size, rows.count)]
                group.addTask { (start, part.map { check($0, of: table, by: verifier) }) }
            }
            var results = Array(repeating: Result<(SignedPayload, [StoredRowCheck.Finding]), StoredRowCheck.Finding>
                .failure(.unreadable("not checked")), count: rows.count)
            for await (start, checked) in group { results.replaceSubrange(start..<start + checked.count, with: checked) }
            return results
        }
    }

    private static func check(_ row: [StoreValue], of table: AuditedTable, by verifier: ReceiptVerifier)
        -> Result<(SignedPayload, [StoredRowCheck.Finding]), StoredRowCheck.Finding> {
        let held = row.map(StoredFact.init)
        return StoredRowCheck.verified(held[table.jwsColumn], as: table.kind, by: verifier).flatMap { payload in
            guard let signed = table.signed(payload) else {
                return .failure(.unreadable("its JWS lacks what a row of \(table.name) is keyed by"))
            }
            return .success((payload, StoredRowCheck.differences(names: table.columns, held: held, signed: signed)))
        }
    }

    /// The most products whose figures are compared one by one (each product's are as many as all products').
    static let maxProducts = 1000

    /// The products a store's rows and figure tables name (at most one more than `maxProducts`): per
    /// product, so that counts moved from one product to another, which leave the totals alone, show.
    private static func products(in store: any SubscriptionStore) async throws -> Set<String> {
        let tables = ["transactions", SubscriptionSummaries.table, FlowDays.table, ExpiryDays.table, ActiveDays.table]
        let names = tables.map { "SELECT product_id FROM \($0) WHERE product_id IS NOT NULL" }.joined(separator: " UNION ")
        return try await store.withStatements(transaction: false) {
            Set(try await $0.run("SELECT product_id FROM (\(names)) AS named LIMIT \(maxProducts + 1)", []).compactMap { $0.first?.text })
        }
    }

    /// How far ahead of now the figures by month are compared: counts kept for days to come (a
    /// period's end, a subscription's expiry) stand in the figures of those days.
    static let monthsAhead: Int64 = 60

    /// The figures compared: each one judged at an instant at `now`; each one over a range by
    /// month from 2008 (before the App Store: the first date a figure takes) to five years ahead, and
    /// by day over the last year, so that a count moved to another day of its month shows too; all
    /// of them over all products, then again for each of `products` (those that take one).
    private func figureQueries(products: [String]) -> [(String, [(String, String)])] {
        let day = FigureInterval.dayMilliseconds
        let tomorrow = min(FigureInterval.instants.upperBound, (now / day + 1) * day)
        let ahead = min(FigureInterval.instants.upperBound, tomorrow + Self.monthsAhead * 31 * day)
        let ranges: [[(String, String)]] = [[("from", "\(FigureInterval.instants.lowerBound)"), ("to", "\(ahead)"), ("by", "month")],
                                            [("from", "\(tomorrow - 365 * day)"), ("to", "\(tomorrow)"), ("by", "day")]]
        return ([nil] + products.map(Optional.some)).flatMap { product in
            StatsController.figures.flatMap { name -> [(String, [(String, String)])] in
                if product != nil, StatsController.allProductFigures.contains(name) { return [] }
                let only = product.map { [("product", $0)] } ?? []
                guard StatsController.rangedFigures.contains(name) else { return [(name, [("at", "\(now)")] + only)] }
                return ranges.map { (name, $0 + only) }
            }
        }
    }
}

/// A store of the audit's own, in a private temporary directory removed after, on which the
/// figures are recomputed from the verified JWS alone. Its rows go in as the JWS give them
/// (StoredTransaction.columnValues) before the tables the figures read exist; the migrations
/// then make those tables from the rows in bulk, as they do for a store that held rows before
/// them: a second way to the same figures, beside the writes that kept the audited store's.
struct ScratchStore: Sendable {
    let store: any SubscriptionStore

    /// The last schema version before the tables derived from the rows (StoreSchema version 6 on).
    static let rowsVersion = 5

    static func with<T: Sendable>(logger: Logger, _ work: @escaping @Sendable (ScratchStore) async throws -> T) async throws -> T {
        let base = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((base + "/receipt-audit-XXXXXX").utf8CString)
        guard mkdtemp(&template) != nil else {
            throw ReceiptServer.AuditRefused(description: "cannot make a scratch directory in \(base): \(String(cString: strerror(errno)))")
        }
        // mkdtemp wrote the directory's name into the template (the pointer it returns is the template's, valid only during the call).
        let directory = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let path = directory + "/figures.db"
        defer {
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(path + suffix) }
            rmdir(directory)
        }
        return try await ReceiptServer.withStore(try StoreLocation(path, password: nil, passFile: nil),
                                                 preparing: .migrateThrough(rowsVersion), logger: logger) { store in
            try await work(ScratchStore(store: store))
        }
    }

    /// Adds verified rows (a page of them, in one transaction).
    func add(_ transactions: [StoredTransaction], _ renewalInfos: [StoredRenewalInfo]) async throws {
        try await store.withStatements(transaction: true) { statements in
            let d = statements.dialect
            for row in transactions { _ = try await statements.run(StoreSchema.upsertTransaction(d), row.columnValues.map(StoreValue.init)) }
            for row in renewalInfos { _ = try await statements.run(StoreSchema.upsertRenewalInfo(d), row.columnValues.map(StoreValue.init)) }
        }
    }

    /// The figures' tables made from the rows added.
    func derive() async throws {
        try await store.withStatements(transaction: true) { try await StoreMigration.migrate(on: $0, derivingFacts: false) }
    }
}
