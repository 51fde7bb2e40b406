import Logging
import ReceiptCore

/// Where `receipt serve` keeps what App Store Server Notifications (and the App Store
/// Server API) told it: rows the core made from verified payloads (ReceivedNotification,
/// StoredTransaction, StoredRenewalInfo). A store writes and looks up; what the rows
/// mean now (SubscriptionState, Entitlements, verifyReceipt's merge) is the core's.
///
/// Every write is durable when it returns (the server answers Apple 200 only then),
/// idempotent, and keeps the newer copy by the core's order (`supersedes`), so that
/// redelivery and out-of-order delivery converge. Implementations: SQLite (one file)
/// and PostgreSQL (several servers on one database).
protocol SubscriptionStore: Sendable {
    /// Runs what the store needs in the background (PostgreSQL's connection pool)
    /// until the task is cancelled; returns at once when it needs nothing.
    func run() async
    /// Creates or upgrades the schema (StoreSchema); throws StoreSchema.TooNew for a
    /// database of a later version. Called once, with `run()` running, before any other call.
    func migrate() async throws
    /// Stores a notification and what it carries (a transaction, a renewal info, a
    /// withdrawal of consent). False when its UUID was stored before: nothing is written again.
    func record(_ notification: ReceivedNotification) async throws -> Bool
    /// Stores transactions and renewal infos learnt otherwise (the App Store Server API).
    func record(transactions: [StoredTransaction], renewalInfos: [StoredRenewalInfo]) async throws
    /// The signed transactions (the `transactionsEach` most recently signed of each
    /// subscription, StoreSchema.maxTransactionsPerSubscription at most) and renewal infos
    /// (JWS, at most one per subscription) of these subscriptions, in one read.
    func subscriptions(_ originalTransactionIDs: [String], transactionsEach: Int) async throws -> StoredSubscriptions
    /// One page of the signed transactions (JWS) bought with this app account token
    /// (lower-cased), most recently signed first: at most `limit` after `cursor`, and
    /// the cursor of the next page when there is one.
    func transactions(appAccountToken: String, after cursor: StoreCursor?, limit: Int) async throws -> StoredPage
    /// The withdrawal of consent stored for this app transaction id, or nil.
    func consentRescission(appTransactionID: String) async throws -> StoredConsentRescission?
    /// The value saved under `key` (a sync's resume point), or nil.
    func setting(_ key: String) async throws -> String?
    func setSetting(_ key: String, _ value: String) async throws
    /// Answers when the database does (one trivial read): /readyz.
    func ping() async throws
    func close() async throws
    /// `work` on one connection; inside a transaction (committed when it returns, rolled
    /// back when it throws) when `transaction` is true. The outbox's operations use it.
    func withStatements<T: Sendable>(transaction: Bool, _ work: @escaping @Sendable (any StoreStatements) async throws -> T) async throws -> T
}

/// The point reads a store can answer at once, on the caller's thread, waiting on nothing
/// (SQLite's quick reads). Each answers nil when it cannot: the caller then makes the
/// read of SubscriptionStore of the same name.
protocol ImmediatePointReads: Sendable {
    func subscriptionsAtOnce(_ originalTransactionIDs: [String], transactionsEach: Int) throws -> StoredSubscriptions?
    func transactionsAtOnce(appAccountToken: String, after cursor: StoreCursor?, limit: Int) throws -> StoredPage?
    /// The outer nil: not at once; the inner: no withdrawal of consent is stored.
    func consentRescissionAtOnce(appTransactionID: String) throws -> StoredConsentRescission??
}

/// The outbox's operations (EventOutbox), the same on every store.
extension SubscriptionStore {
    func registerWebhooks(_ urls: [String]) async throws {
        try await withStatements(transaction: true) {
            try await EventOutbox.register(urls, on: $0, at: ReceiptVerifier.currentMilliseconds())
        }
    }

    func claimDeliveries(endpoints: [String], limit: Int, leaseMilliseconds: Int64, firstAttemptsOnly: Bool = false) async throws
        -> [ClaimedDelivery] {
        try await withStatements(transaction: true) {
            try await EventOutbox.claim(endpoints: endpoints, limit: limit, leaseMilliseconds: leaseMilliseconds,
                                        firstAttemptsOnly: firstAttemptsOnly, on: $0, at: ReceiptVerifier.currentMilliseconds())
        }
    }

    /// Records how a batch of attempts went, in one transaction.
    func finish(_ outcomes: [(ClaimedDelivery, DeliveryOutcome)]) async throws {
        try await withStatements(transaction: true) { statements in
            for (delivery, outcome) in outcomes { try await EventOutbox.finish(delivery, outcome, on: statements) }
        }
    }

    func activeSubscriptions(at instant: Int64, product: String?) async throws -> [SubscriptionCount] {
        try await withStatements(transaction: false) { try await StoreFigures.activeSubscriptions(at: instant, product: product, on: $0) }
    }

    func activePrices(at instant: Int64, product: String?) async throws -> [PriceGroup] {
        try await withStatements(transaction: false) { try await StoreFigures.activePrices(at: instant, product: product, on: $0) }
    }

    /// Every product's subscriptions by status and active prices at `instant`, in one reading
    /// (the dashboard's subscriptions and MRR; StoreFigures.counts and .priceGroups).
    func standing(at instant: Int64) async throws -> ExpiryDays.Standing {
        try await withStatements(transaction: false) { try await ExpiryDays.standing(at: instant, product: nil, on: $0) }
    }

    func flows(from: Int64, to: Int64, at instant: Int64, product: String?) async throws -> [DayFlows] {
        try await withStatements(transaction: false) {
            try await StoreFigures.flows(from: from, to: to, at: instant, product: product, on: $0)
        }
    }

    func deliveryBacklog() async throws -> (count: Int64, oldest: Int64?) {
        try await withStatements(transaction: false) { try await EventOutbox.backlog(on: $0) }
    }

    func events(state: String?, before: Int64?, limit: Int) async throws -> [EventSummary] {
        try await withStatements(transaction: false) { try await EventOutbox.list(state: state, before: before, limit: limit, on: $0) }
    }

    func event(id: String) async throws -> EventDetail? {
        try await withStatements(transaction: false) { try await EventOutbox.show(eventID: id, on: $0) }
    }

    func latestEvents(orderingKeys: [String], limit: Int) async throws -> [EventDetail] {
        try await withStatements(transaction: false) { try await EventOutbox.latest(orderingKeys: orderingKeys, limit: limit, on: $0) }
    }

    func consumption<T: Sendable>(_ operation: @escaping @Sendable (any StoreStatements, Int64) async throws -> T) async throws -> T {
        try await withStatements(transaction: true) { try await operation($0, ReceiptVerifier.currentMilliseconds()) }
    }

    /// Deletes the events made before `createdBefore` that no delivery waits on, a batch per
    /// transaction (EventOutbox.prune); the number deleted.
    func pruneEvents(createdBefore: Int64) async throws -> Int {
        var pruned = 0
        while true {
            let batch = try await withStatements(transaction: true) {
                try await EventOutbox.prune(createdBefore: createdBefore, limit: EventOutbox.prunedPerTransaction, on: $0)
            }
            pruned += batch
            if batch < EventOutbox.prunedPerTransaction { return pruned }
        }
    }

    func replay(eventID: String?, force: Bool) async throws -> EventOutbox.ReplayOutcome {
        try await withStatements(transaction: true) {
            try await EventOutbox.replay(eventID: eventID, force: force, on: $0, at: ReceiptVerifier.currentMilliseconds())
        }
    }
}

/// What a store holds of some subscriptions, as the JWS it keeps, each kind in the order
/// it was signed.
struct StoredSubscriptions: Sendable {
    var transactions: [String] = []
    var renewalInfos: [String] = []

    /// One row of `StoreSchema.subscriptionsQuery`.
    struct Row {
        let isTransaction: Bool
        let signedDate: Int64
        let jws: String

        /// The query's columns: `kind` 0 for a transaction, 1 for a renewal info.
        init(kind: Int64, signedDate: Int64, jws: String) {
            isTransaction = kind == 0
            self.signedDate = signedDate
            self.jws = jws
        }
    }

    init() {}

    /// The rows of `StoreSchema.subscriptionsQuery`, put in signing order here (rows signed
    /// at the same instant in any order, as SQL's would be): the query leaves them unordered
    /// because SQLite orders a result by copying every row, JWS and all, into a temporary
    /// tree, and then copies each JWS out of it again.
    init(rows: [Row]) {
        for row in rows.sorted(by: { $0.signedDate < $1.signedDate }) {
            if row.isTransaction { transactions.append(row.jws) } else { renewalInfos.append(row.jws) }
        }
    }
}

/// Where a page of an account's transactions ends: the last row's signing date and
/// transaction id (rows come most recently signed first). As text: `SIGNEDDATE-ID`.
public struct StoreCursor: Sendable, Equatable {
    let signedDate: Int64
    let transactionID: String

    public init?(_ text: String) {
        let parts = text.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let date = Int64(parts[0]), !parts[1].isEmpty, parts[1].utf8.count <= 64,
              parts[1].utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else { return nil }
        signedDate = date
        transactionID = String(parts[1])
    }

    init(signedDate: Int64, transactionID: String) {
        self.signedDate = signedDate
        self.transactionID = transactionID
    }

    public var text: String { "\(signedDate)-\(transactionID)" }
}

/// One page of an account's transactions.
struct StoredPage: Sendable {
    var transactions: [String] = []
    var next: StoreCursor?

    /// The page of `rows` (signed date, transaction id, JWS), read with one more than
    /// `limit` so that the one more says whether another page follows.
    static func of(_ rows: [(Int64, String, String)], limit: Int) -> StoredPage {
        let kept = rows.prefix(max(1, limit))
        return StoredPage(transactions: kept.map(\.2),
                          next: rows.count > kept.count ? kept.last.map { StoreCursor(signedDate: $0.0, transactionID: $0.1) } : nil)
    }
}

/// Opens the store `location` names: a postgres:// URL, or else an SQLite file path.
/// Not yet migrated: see `SubscriptionStore.migrate`.
func makeSubscriptionStore(location: StoreLocation, logger: Logger) async throws -> any SubscriptionStore {
    if location.isPostgres {
        var url = try PostgresLocation(location.text)
        url.password = location.password
        return PostgresSubscriptionStore.make(location: url, logger: logger)
    }
    return try await SQLiteSubscriptionStore.open(path: location.text, logger: logger)
}

/// The tables, one schema for both databases (types and statements both accept).
/// Versioned: `schema_version` holds the version applied; a server applies the
/// versions after it in order at start, and refuses a database newer than it knows.
enum StoreSchema {
    static let migrations: [[String]] = [
        // Version 1.
        [
            """
            CREATE TABLE transactions (transaction_id TEXT PRIMARY KEY, original_transaction_id TEXT NOT NULL,
              product_id TEXT, app_account_token TEXT, signed_date BIGINT NOT NULL, jws TEXT NOT NULL)
            """,
            "CREATE INDEX transactions_by_original ON transactions (original_transaction_id)",
            "CREATE INDEX transactions_by_account ON transactions (app_account_token)",
            """
            CREATE TABLE renewal_infos (original_transaction_id TEXT PRIMARY KEY, signed_date BIGINT NOT NULL,
              jws TEXT NOT NULL)
            """,
            """
            CREATE TABLE notifications (notification_uuid TEXT PRIMARY KEY, notification_type TEXT NOT NULL,
              subtype TEXT, signed_date BIGINT NOT NULL, original_transaction_id TEXT, received_at BIGINT NOT NULL)
            """,
            "CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        ],
        // Version 2: the reads' orders as indexes, so that a page or a subscription's latest
        // transactions are read from the index in order, whatever the history holds.
        [
            "CREATE INDEX transactions_by_original_signing ON transactions (original_transaction_id, signed_date, transaction_id)",
            "CREATE INDEX transactions_by_account_signing ON transactions (app_account_token, signed_date, transaction_id)",
        ],
        // Version 3: consent withdrawn (RESCIND_CONSENT), one row per app transaction.
        [
            """
            CREATE TABLE consent_rescissions (app_transaction_id TEXT PRIMARY KEY, notification_uuid TEXT NOT NULL,
              signed_date BIGINT NOT NULL, jws TEXT NOT NULL)
            """,
        ],
        // Version 4: the outbox. Every change accepted becomes an event (its JSON body, the
        // StoreEvent the core made) in the change's transaction; each webhook endpoint the
        // servers were given gets a delivery row per event, which a worker leases, sends, and
        // marks delivered, due again later, or failed. `{SEQUENCE}` is the dialect's
        // auto-numbered key (StoreDialect): the order events were made in.
        [
            """
            CREATE TABLE events (sequence {SEQUENCE}, event_id TEXT NOT NULL UNIQUE, event_type TEXT NOT NULL,
              ordering_key TEXT NOT NULL, created_at BIGINT NOT NULL, body TEXT NOT NULL)
            """,
            "CREATE TABLE webhook_endpoints (url TEXT PRIMARY KEY, registered_at BIGINT NOT NULL)",
            """
            CREATE TABLE deliveries (event_sequence BIGINT NOT NULL, endpoint TEXT NOT NULL, ordering_key TEXT NOT NULL,
              state TEXT NOT NULL, attempts INTEGER NOT NULL, next_attempt_at BIGINT NOT NULL, lease_until BIGINT NOT NULL,
              created_at BIGINT NOT NULL, delivered_at BIGINT, last_outcome TEXT, PRIMARY KEY (event_sequence, endpoint))
            """,
            "CREATE INDEX deliveries_due ON deliveries (state, next_attempt_at)",
            "CREATE INDEX deliveries_in_order ON deliveries (endpoint, ordering_key, state, event_sequence)",
            // The answers to CONSUMPTION_REQUEST (ConsumptionOutbox): awaiting the app or the policy,
            // pending until Apple took them, then sent, failed or expired (past Apple's 12 hours).
            """
            CREATE TABLE consumption_answers (transaction_id TEXT PRIMARY KEY, original_transaction_id TEXT, product_id TEXT,
              requested_at BIGINT NOT NULL, deadline BIGINT NOT NULL, state TEXT NOT NULL, source TEXT, body TEXT,
              attempts INTEGER NOT NULL, next_attempt_at BIGINT NOT NULL, lease_until BIGINT NOT NULL, last_outcome TEXT)
            """,
            "CREATE INDEX consumption_answers_due ON consumption_answers (state, next_attempt_at)",
        ],
        // Version 5: each row's facts (ReceiptCore's StoredFacts: dates, product type, price and
        // currency, offer, revocation, environment, renewal status) as columns beside its JWS,
        // for the reads and the figures: a version of `factVersions`.
        [],
        // Version 6: a summary per subscription (SubscriptionSummaries), made from the rows held
        // and kept by every write after, which the figures read instead of every transaction.
        SubscriptionSummaries.migration,
        // Version 7: the periods begun per day and product, by kind (FlowDays), made from the
        // rows held and kept by every write after, which the flows read for whole days; the
        // indexes of the flows' refunds and churn covering what they read.
        FlowDays.migration + StoreFigures.flowIndexes,
        // Version 8: the summaries counted per expiry day (ExpiryDays), made from the summaries
        // held and kept by every write after, which the subscriptions and MRR figures read.
        ExpiryDays.migration,
        // Version 9: replays of delivered events, counted (EventOutbox.maxForcedReplays); the deliveries
        // never attempted, by endpoint, for a worker whose endpoint is down (EndpointHealth).
        ["ALTER TABLE events ADD COLUMN forced_replays INTEGER NOT NULL DEFAULT 0",
         "CREATE INDEX deliveries_never_attempted ON deliveries (endpoint, attempts, event_sequence)"],
        // Version 10: the bundle id each transaction was signed for (a fact column), which
        // StoreIdentity reads before a server claims the store.
        [],
        // Version 11: each summary's source rows, and a subscription's transactions by purchase,
        // so that a write's cost does not grow with the subscription's history (SubscriptionSummaries).
        SubscriptionSummaries.sourceMigration + ExpiryDays.refill,
    ]
    /// The versions that add the fact columns a store lacks (StoredFacts, as this server
    /// knows them) and derive every row's facts from its JWS (StoreMigration). A column
    /// added to StoredFacts later comes with a new version listed here.
    static let factVersions: Set<Int> = [5, 10]
    static var version: Int { migrations.count }

    /// The migrations' statements in a dialect's words.
    static func statements(of version: Int, _ dialect: StoreDialect) -> [String] {
        migrations[version - 1].map { $0.replacing("{SEQUENCE}", with: dialect.sequenceColumn) }
    }

    /// The upserts: a copy replaces the stored one only when it supersedes it (the
    /// core's order, as a row-value comparison; `collate` makes text compare bytewise).
    /// Placeholders: the key columns as named here, then the facts (StoredFacts) in order.
    static func upsertTransaction(_ d: StoreDialect) -> String {
        upsert(into: "transactions", key: "transaction_id",
               columns: ["transaction_id", "original_transaction_id", "product_id", "app_account_token", "signed_date", "jws"]
                   + StoredFacts.transactionColumns.map(\.name), d)
    }

    static func upsertRenewalInfo(_ d: StoreDialect) -> String {
        upsert(into: "renewal_infos", key: "original_transaction_id",
               columns: ["original_transaction_id", "signed_date", "jws"] + StoredFacts.renewalInfoColumns.map(\.name), d)
    }

    private static func upsert(into table: String, key: String, columns: [String], _ d: StoreDialect) -> String {
        """
        INSERT INTO \(table) (\(columns.joined(separator: ", ")))
        VALUES (\(d.placeholders(1...columns.count).joined(separator: ", ")))
        ON CONFLICT (\(key)) DO UPDATE SET \(columns.dropFirst().map { "\($0) = excluded.\($0)" }.joined(separator: ", "))
        WHERE (excluded.signed_date, excluded.jws\(d.collate)) > (\(table).signed_date, \(table).jws\(d.collate))
        """
    }

    static func upsertConsentRescission(placeholders p: [String], collate: String = "") -> String {
        """
        INSERT INTO consent_rescissions (app_transaction_id, notification_uuid, signed_date, jws)
        VALUES (\(p[0]), \(p[1]), \(p[2]), \(p[3]))
        ON CONFLICT (app_transaction_id) DO UPDATE SET notification_uuid = excluded.notification_uuid,
          signed_date = excluded.signed_date, jws = excluded.jws
        WHERE (excluded.signed_date, excluded.jws\(collate)) > (consent_rescissions.signed_date, consent_rescissions.jws\(collate))
        """
    }

    static let consentRescissionQuery = "SELECT notification_uuid, signed_date, jws FROM consent_rescissions WHERE app_transaction_id = "

    static func insertNotification(placeholders p: [String]) -> String {
        """
        INSERT INTO notifications (notification_uuid, notification_type, subtype, signed_date, original_transaction_id,
          received_at) VALUES (\(p[0]), \(p[1]), \(p[2]), \(p[3]), \(p[4]), \(p[5]))
        ON CONFLICT (notification_uuid) DO NOTHING
        """
    }

    /// The most transactions of one subscription a read hands the core (the most
    /// recently signed, then the greatest ids), so that a read costs the same whatever a
    /// subscription's history holds (1,000 monthly renewals are 83 years): its state
    /// reads the latest 100 (the deciding period is among them), verifyReceipt's merge
    /// the latest 1,000 (`latest_receipt_info` lists them).
    static let stateTransactionsPerSubscription = 100
    static let maxTransactionsPerSubscription = 1000
    /// The most transactions of an account one page of /v1/entitlements holds.
    static let maxPageTransactions = 100

    /// One read of some subscriptions' transactions (kind 0; the `each` most recently
    /// signed of each) and renewal infos (kind 1): rows of kind, signed date and JWS, in no
    /// order (StoredSubscriptions(rows:) orders them). `list` is the SQL that stands for the
    /// ids (`IN (…)`, `= ANY(…)`), used twice; `each` a literal number. With `one` (the list
    /// holds a single id, as most reads' do), the latest are read down the index of the
    /// subscription's signing dates, `each` entries of it, where the ranks of several
    /// subscriptions read every entry of each: a read's cost then does not grow with the
    /// subscription's history.
    static func subscriptionsQuery(_ list: String, each: Int, collate: String = "", one: Bool = false) -> String {
        let renewals = "SELECT 1 AS kind, signed_date, jws FROM renewal_infos WHERE original_transaction_id \(list)"
        let count = max(0, min(each, maxTransactionsPerSubscription))
        guard count > 0 else { return renewals }
        if one {
            return """
                SELECT * FROM (SELECT 0 AS kind, signed_date, jws FROM transactions WHERE original_transaction_id \(list)
                  ORDER BY signed_date DESC, transaction_id\(collate) DESC LIMIT \(count)) AS latest
                UNION ALL
                \(renewals)
                """
        }
        // The ranks read only the index; the JWS is fetched for the rows kept.
        return """
            SELECT 0 AS kind, kept.signed_date, kept.jws FROM transactions AS kept JOIN (
              SELECT transaction_id, ROW_NUMBER() OVER (PARTITION BY original_transaction_id
                ORDER BY signed_date DESC, transaction_id\(collate) DESC) AS position
              FROM transactions WHERE original_transaction_id \(list)) AS ranked
            ON ranked.transaction_id = kept.transaction_id WHERE ranked.position <= \(count)
            UNION ALL
            \(renewals)
            """
    }

    /// A page of an account's transactions, most recently signed first; with a cursor,
    /// only rows after it. Placeholders: the token, then (with a cursor) its date and id.
    static func accountPageQuery(placeholders p: [String], afterCursor: Bool, limit: Int, collate: String = "") -> String {
        let after = afterCursor ? "AND (signed_date, transaction_id\(collate)) < (\(p[1]), \(p[2])\(collate))" : ""
        return """
            SELECT signed_date, transaction_id, jws FROM transactions WHERE app_account_token = \(p[0]) \(after)
            ORDER BY signed_date DESC, transaction_id\(collate) DESC LIMIT \(max(1, min(limit, maxPageTransactions)) + 1)
            """
    }

    /// A database whose schema is newer than this server's.
    struct TooNew: Error, CustomStringConvertible {
        let found: Int
        var description: String {
            "the store's schema is version \(found); this receipt serve knows versions up to \(StoreSchema.version): upgrade it"
        }
    }
}
