import Logging
import PostgresNIO
import ReceiptCore

/// The store for several `receipt serve` processes behind a load balancer: one
/// PostgreSQL database (postgres-nio's pooled client). Each notification is one
/// transaction: its row is inserted first, so that of two servers given the same
/// notification one stores it and the other waits on that row, then finds it there.
/// Text is compared with `COLLATE "C"` (bytewise), as the core's order requires.
final class PostgresSubscriptionStore: SubscriptionStore {
    private let client: PostgresClient
    private let logger: Logger
    static let placeholders = StoreDialect.postgres.placeholders(1...6)

    private init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// A client for `location` (see PostgresLocation); `run()` must run for it to connect.
    static func make(location: PostgresLocation, logger: Logger) -> PostgresSubscriptionStore {
        var configuration = PostgresClient.Configuration(host: location.host, port: location.port, username: location.user,
                                                         password: location.password, database: location.database,
                                                         tls: location.clientTLS)
        configuration.options.maximumConnections = 16
        // The driver's connection chatter (info) only with --verbose; its warnings and errors always.
        var driverLogger = logger
        if driverLogger.logLevel > .debug { driverLogger.logLevel = .warning }
        return PostgresSubscriptionStore(client: PostgresClient(configuration: configuration, backgroundLogger: driverLogger),
                                         logger: driverLogger)
    }

    func run() async { await client.run() }

    static let lockPollMilliseconds = 200

    /// Creates or upgrades the schema; servers starting together take turns (an advisory lock).
    /// The turn is asked for again every `lockPollMilliseconds` rather than waited for in the
    /// database, so that a server stopped while another migrates stops at once (a cancelled task).
    func migrate() async throws {
        let logger = self.logger
        let upgraded = try await client.withTransaction(logger: logger) { connection in
            let statements = PostgresStatements(connection: connection, logger: logger)
            while try await statements.run("SELECT pg_try_advisory_xact_lock(7352841)::int", []).first?.first?.integer != 1 {
                try await Task.sleep(for: .milliseconds(Self.lockPollMilliseconds))
            }
            return try await StoreMigration.migrate(on: statements)
        }
        if upgraded { try await vacuumAfterUpgrade() }
    }

    /// An upgrade rewrites every row of the big tables (schema 6 numbers each transaction's
    /// period) while autovacuum waits for its lock, leaving them without statistics and with
    /// no page marked all-visible: until autovacuum comes round, PostgreSQL then plans
    /// blind and reads each row of a covering index from the table too (the flows took
    /// 2.5 s at 1,000,000 subscriptions). VACUUM cannot run in a transaction, so it runs
    /// after the upgrade's; a server that starts beside it meanwhile reads correct rows.
    private func vacuumAfterUpgrade() async throws {
        logger.info("store upgraded: VACUUM (ANALYZE) of its tables")
        try await client.withConnection { connection in
            let tables = ["transactions", "renewal_infos", SubscriptionSummaries.table, FlowDays.table, ActiveDays.table,
                          MRRMoveDays.table, SubscriptionMoves.table]
            try await connection.query(PostgresQuery(unsafeSQL: "VACUUM (ANALYZE) " + tables.joined(separator: ", ")), logger: logger)
        }
    }

    /// Each notification in a transaction of its own, on any of the pool's connections: PostgreSQL
    /// commits concurrent transactions together itself, and one connection writing batches in turn
    /// (GroupCommit, as SQLite's single writer does) ingested fewer a second (docs/performance.md).
    func record(_ notification: ReceivedNotification) async throws -> Bool {
        do {
            return try await withStatements(transaction: true) { try await StoreWrites.record(notification, on: $0) }
        } catch {
            throw StoreRowRefused.from(error) ?? error
        }
    }

    func record(transactions: [StoredTransaction], renewalInfos: [StoredRenewalInfo]) async throws {
        do {
            try await withStatements(transaction: true) {
                try await StoreWrites.record(transactions: transactions, renewalInfos: renewalInfos, on: $0)
            }
        } catch {
            throw StoreRowRefused.from(error) ?? error
        }
    }

    func withStatements<T: Sendable>(transaction: Bool,
                                     _ work: @escaping @Sendable (any StoreStatements) async throws -> T) async throws -> T {
        let logger = logger
        guard transaction else {
            return try await client.withConnection { try await work(PostgresStatements(connection: $0, logger: logger)) }
        }
        return try await client.withTransaction(logger: logger) { try await work(PostgresStatements(connection: $0, logger: logger)) }
    }

    func subscriptions(_ originalTransactionIDs: [String], transactionsEach: Int) async throws -> StoredSubscriptions {
        guard !originalTransactionIDs.isEmpty else { return StoredSubscriptions() }
        var binds = PostgresBindings()
        binds.append(originalTransactionIDs)
        let query = StoreSchema.subscriptionsQuery("= ANY($1)", each: transactionsEach, collate: " COLLATE \"C\"",
                                                   one: originalTransactionIDs.count == 1)
        let rows = try await client.query(PostgresQuery(unsafeSQL: query, binds: binds), logger: logger)
        var found: [StoredSubscriptions.Row] = []
        for try await (kind, signed, jws) in rows.decode((Int32, Int64, String).self) {
            found.append(StoredSubscriptions.Row(kind: Int64(kind), signedDate: signed, jws: jws))
        }
        return StoredSubscriptions(rows: found)
    }

    func transactions(appAccountToken: String, after cursor: StoreCursor?, limit: Int) async throws -> StoredPage {
        var binds = PostgresBindings()
        binds.append(appAccountToken.lowercased())
        if let cursor {
            binds.append(cursor.signedDate)
            binds.append(cursor.transactionID)
        }
        let query = StoreSchema.accountPageQuery(placeholders: Self.placeholders, afterCursor: cursor != nil, limit: limit,
                                                 collate: " COLLATE \"C\"")
        let rows = try await client.query(PostgresQuery(unsafeSQL: query, binds: binds), logger: logger)
        var found: [(Int64, String, String)] = []
        for try await row in rows.decode((Int64, String, String).self) { found.append(row) }
        return StoredPage.of(found, limit: limit)
    }

    func consentRescission(appTransactionID: String) async throws -> StoredConsentRescission? {
        var binds = PostgresBindings()
        binds.append(appTransactionID)
        let rows = try await client.query(PostgresQuery(unsafeSQL: StoreSchema.consentRescissionQuery + "$1", binds: binds),
                                          logger: logger)
        var found: StoredConsentRescission?
        for try await (uuid, signed, jws) in rows.decode((String, Int64, String).self) {
            found = StoredConsentRescission(storedJWS: jws, notificationUUID: uuid, signedDate: signed)
        }
        return found
    }

    func setting(_ key: String) async throws -> String? {
        var value: String?
        for try await found in try await client.query("SELECT value FROM settings WHERE key = \(key)", logger: logger)
            .decode(String.self) {
            value = found
        }
        return value
    }

    func setSetting(_ key: String, _ value: String) async throws {
        try await client.query("""
            INSERT INTO settings (key, value) VALUES (\(key), \(value)) ON CONFLICT (key) DO UPDATE SET value = excluded.value
            """, logger: logger)
    }

    func ping() async throws { try await client.query("SELECT 1", logger: logger) }

    func close() async throws {}
}
