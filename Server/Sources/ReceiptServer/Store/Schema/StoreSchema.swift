import ReceiptCore

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
        StoreSchemaHistory.subscriptionSummaries,
        // Version 7: the periods begun per day and product, by kind (FlowDays), made from the
        // rows held and kept by every write after, which the flows read for whole days; the
        // indexes of the flows' refunds and churn covering what they read.
        StoreSchemaHistory.flowDays,
        // Version 8: the summaries counted per expiry day (ExpiryDays), made from the summaries
        // held and kept by every write after, which the subscriptions and MRR figures read.
        StoreSchemaHistory.expiryDays,
        // Version 9: replays of delivered events, counted (EventOutbox.maxForcedReplays); the deliveries
        // never attempted, by endpoint, for a worker whose endpoint is down (EndpointHealth).
        ["ALTER TABLE events ADD COLUMN forced_replays INTEGER NOT NULL DEFAULT 0",
         "CREATE INDEX deliveries_never_attempted ON deliveries (endpoint, attempts, event_sequence)"],
        // Version 10: the bundle id each transaction was signed for (a fact column), which
        // StoreIdentity reads before a server claims the store.
        [],
        // Version 11: each summary's source rows, and a subscription's transactions by purchase,
        // so that a write's cost does not grow with the subscription's history (SubscriptionSummaries).
        StoreSchemaHistory.summarySources,
        // Version 12: the periods begun counted per currency too, with all of them and their prices
        // added up (FlowDays), which the revenue reads for whole days instead of every period bought.
        StoreSchemaHistory.flowDaysByCurrency,
        // Version 13: beside the periods begun, what the rates count (FlowDays.rateCounts): paid
        // periods, those refunded, first paid periods and converted trials.
        StoreSchemaHistory.flowDaysWithRates,
        // Version 14: the subscriptions active at each midnight, per product, as changes per day
        // (ActiveDays), filled from the rows held by the writes' own computation (StoreMigration)
        // and kept by every write after. A later change to that computation clears and refills it (15, 16).
        // The index of a subscription's ends lets a write read only the periods that end after its
        // earliest purchase, whatever the history holds.
        ["CREATE TABLE subscription_active_days (day BIGINT NOT NULL, product_id TEXT NOT NULL, change BIGINT NOT NULL, "
            + "PRIMARY KEY (day, product_id))",
         "CREATE INDEX transactions_by_original_expiry ON transactions (original_transaction_id, expires_date)"],
        // Version 15: the same changes per day kept per currency, plan (BillingPeriod) and free trial or not,
        // with the prices of the subscriptions they count (ActiveDays), so that the active trials and
        // MRR at any midnight are sums as the active count is, and each day's MRR moves per currency
        // (MRRMoveDays); both made afresh from the rows held.
        ["DROP TABLE subscription_active_days",
         "CREATE TABLE subscription_active_days (day BIGINT NOT NULL, product_id TEXT NOT NULL, currency TEXT NOT NULL, "
            + "billing_period TEXT NOT NULL, free_trial BIGINT NOT NULL, change BIGINT NOT NULL, price_change BIGINT NOT NULL, "
            + "PRIMARY KEY (day, product_id, currency, billing_period, free_trial))",
         "CREATE TABLE subscription_mrr_moves (day BIGINT NOT NULL, currency TEXT NOT NULL, move TEXT NOT NULL, "
            + "subscriptions BIGINT NOT NULL, twelfths BIGINT NOT NULL, PRIMARY KEY (day, currency, move))"],
        // Version 16: each subscription's MRR moves (SubscriptionMoves), which a count of the MRR movement
        // lists, read down an index by kind and day; all three tables made afresh from the rows held.
        ["DELETE FROM subscription_active_days", "DELETE FROM subscription_mrr_moves",
         "CREATE TABLE subscription_moves (original_transaction_id TEXT NOT NULL, day BIGINT NOT NULL, currency TEXT NOT NULL, "
            + "move TEXT NOT NULL, product_id TEXT NOT NULL, moves BIGINT NOT NULL, twelfths BIGINT NOT NULL, "
            + "PRIMARY KEY (original_transaction_id, day, currency, move, product_id))",
         "CREATE INDEX subscription_moves_by_kind ON subscription_moves (move, day, original_transaction_id)"],
    ]
    /// The versions that add the fact columns a store lacks (StoredFacts, as this server
    /// knows them) and derive every row's facts from its JWS (StoreMigration). A column
    /// added to StoredFacts later comes with a new version listed here.
    static let factVersions: Set<Int> = [5, 10]
    /// The version whose tables are filled by Swift from the rows held (ActiveDays.fill), after its
    /// statements: the latest that made or emptied them (a store that migrates past an earlier one fills them once).
    static let activeDaysVersion = 16
    static var version: Int { migrations.count }

    /// The migrations' statements in a dialect's words.
    static func statements(of version: Int, _ dialect: StoreDialect) -> [String] {
        migrations[version - 1].map { $0.replacing("{SEQUENCE}", with: dialect.sequenceColumn) }
    }

    /// The upserts: a copy replaces the stored one only when it supersedes it (the
    /// core's order, as a row-value comparison; `collate` makes text compare bytewise).
    /// Placeholders: the rows' columns in order (StoredTransaction.columnNames, StoredRenewalInfo.columnNames).
    static func upsertTransaction(_ d: StoreDialect) -> String {
        upsert(into: "transactions", key: "transaction_id", columns: StoredTransaction.columnNames, d)
    }

    static func upsertRenewalInfo(_ d: StoreDialect) -> String {
        upsert(into: "renewal_infos", key: "original_transaction_id", columns: StoredRenewalInfo.columnNames, d)
    }

    private static func upsert(into table: String, key: String, columns: [String], _ d: StoreDialect) -> String {
        """
        INSERT INTO \(table) (\(columns.joined(separator: ", ")))
        VALUES (\(d.placeholders(1...columns.count).joined(separator: ", ")))
        ON CONFLICT (\(key)) DO UPDATE SET \(columns.dropFirst().map { "\($0) = excluded.\($0)" }.joined(separator: ", "))
        WHERE (excluded.signed_date, excluded.jws\(d.collate)) > (\(table).signed_date, \(table).jws\(d.collate))
        """
    }

    static func upsertConsentRescission(_ d: StoreDialect) -> String {
        upsert(into: "consent_rescissions", key: "app_transaction_id", columns: StoredConsentRescission.columnNames, d)
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
