"""Reading a store's tables behind the server's back, and making a store of an older schema
from one of today's (what a migration test or a bench starts from), on SQLite or PostgreSQL."""
import sqlite3
import subprocess

#: What schema 6 added to the transactions: each period's place and the period before it.
SCHEMA_6_COLUMNS = ("period_position", "previous_expires_date", "previous_offer_discount_type")


def table(location, query):
    """The rows of `query` in a store (an SQLite path or a postgres:// URL), every value as text."""
    if str(location).startswith("postgres://"):
        out = subprocess.run(["psql", str(location), "-At", "-F", "\t", "-c", query], check=True,
                             capture_output=True, text=True).stdout
        return [tuple(line.split("\t")) for line in out.splitlines()]
    with sqlite3.connect(location) as connection:
        return [tuple("" if value is None else str(value) for value in row) for row in connection.execute(query)]


#: The schema version a server of this build makes and upgrades to.
SCHEMA_VERSION = "16"

#: What schema 11 added to the summaries: the rows each stands on.
SCHEMA_11_COLUMNS = ("standing_transaction_id", "last_transaction_id")


def downgrade_to_schema_15(location):
    """What a store of schema 15 held: no moves per subscription, version 15."""
    for statement in ("DROP TABLE subscription_moves", "DELETE FROM schema_version WHERE version > 15"):
        table(location, statement)


def downgrade_to_schema_14(location):
    """What a store of schema 14 held: the subscriptions active per midnight per product alone
    (the counts of today's table added up over currency, plan and trial), no MRR moves, version 14."""
    downgrade_to_schema_15(location)
    for statement in ("CREATE TABLE subscription_active_days_14 (day BIGINT NOT NULL, product_id TEXT NOT NULL, "
                      "change BIGINT NOT NULL, PRIMARY KEY (day, product_id))",
                      "INSERT INTO subscription_active_days_14 SELECT day, product_id, CAST(sum(change) AS BIGINT) "
                      "FROM subscription_active_days GROUP BY day, product_id",
                      "DROP TABLE subscription_active_days", "DROP TABLE subscription_mrr_moves",
                      "ALTER TABLE subscription_active_days_14 RENAME TO subscription_active_days",
                      "DELETE FROM schema_version WHERE version > 14"):
        table(location, statement)


def downgrade_to_schema_13(location):
    """What a store of schema 13 held: no subscriptions active per midnight nor MRR moves, version 13."""
    table(location, "DROP TABLE IF EXISTS subscription_moves")
    for statement in ("DROP TABLE subscription_active_days", "DROP TABLE IF EXISTS subscription_mrr_moves",
                      "DROP INDEX transactions_by_original_expiry",
                      "DELETE FROM schema_version WHERE version > 13"):
        table(location, statement)


def downgrade_to_schema_12(location):
    """What a store of schema 12 held: the periods begun counted without what the rates count (an
    empty table: schema 13 counts them again from the rows), version 12."""
    downgrade_to_schema_13(location)
    for statement in ("DROP TABLE subscription_flow_days",
                      "CREATE TABLE subscription_flow_days (day BIGINT NOT NULL, product_id TEXT NOT NULL, "
                      "currency TEXT NOT NULL, new_subscriptions BIGINT NOT NULL, trial_starts BIGINT NOT NULL, "
                      "renewals BIGINT NOT NULL, trial_conversions BIGINT NOT NULL, recoveries BIGINT NOT NULL, "
                      "reactivations BIGINT NOT NULL, periods BIGINT NOT NULL, price_sum BIGINT NOT NULL, "
                      "PRIMARY KEY (day, product_id, currency))",
                      "DELETE FROM schema_version WHERE version > 12"):
        table(location, statement)


def downgrade_to_schema_11(location):
    """What a store of schema 11 held: the periods begun counted per day and product, not per
    currency, and no prices added up (an empty table: schema 12 counts them again from the rows), version 11."""
    downgrade_to_schema_12(location)
    for statement in ("DROP TABLE subscription_flow_days",
                      "CREATE TABLE subscription_flow_days (day BIGINT NOT NULL, product_id TEXT NOT NULL, "
                      "new_subscriptions BIGINT NOT NULL, trial_starts BIGINT NOT NULL, renewals BIGINT NOT NULL, "
                      "trial_conversions BIGINT NOT NULL, recoveries BIGINT NOT NULL, reactivations BIGINT NOT NULL, "
                      "PRIMARY KEY (day, product_id))",
                      "DELETE FROM schema_version WHERE version > 11"):
        table(location, statement)


def downgrade_to_schema_10(location):
    """What a store of schema 10 held: summaries without their source rows, a subscription's
    transactions indexed by its id alone, version 10."""
    downgrade_to_schema_11(location)
    for statement in (*(f"ALTER TABLE subscription_summaries DROP COLUMN {column}" for column in SCHEMA_11_COLUMNS),
                      "DROP INDEX transactions_by_original_purchase",
                      "CREATE INDEX transactions_by_original ON transactions (original_transaction_id)",
                      "DELETE FROM schema_version WHERE version > 10"):
        table(location, statement)


def downgrade_to_schema_9(location):
    """What a store of schema 9 held: no bundle id beside each transaction, version 9."""
    downgrade_to_schema_10(location)
    for statement in ("ALTER TABLE transactions DROP COLUMN bundle_id", "DELETE FROM schema_version WHERE version > 9"):
        table(location, statement)


def downgrade_to_schema_8(location):
    """What a store of schema 8 held: forced replays not counted, version 8."""
    downgrade_to_schema_9(location)
    for statement in ("ALTER TABLE events DROP COLUMN forced_replays", "DROP INDEX deliveries_never_attempted",
                      "DELETE FROM schema_version WHERE version > 8"):
        table(location, statement)


def downgrade_to_schema_7(location):
    """What a store of schema 7 held: no counts of the summaries per expiry day, version 7."""
    downgrade_to_schema_8(location)
    for statement in ("DROP TABLE subscription_expiry_days", "DROP INDEX subscription_summaries_by_purchase",
                      "DROP INDEX subscription_summaries_by_grace", "DELETE FROM schema_version WHERE version > 7"):
        table(location, statement)


def downgrade_to_schema_6(location):
    """What a store of schema 6 held: no counts of the periods begun per day, indexes of one
    column for the refunds and the churn, version 6."""
    downgrade_to_schema_7(location)
    for statement in ("DROP TABLE subscription_flow_days", "DROP INDEX transactions_by_revocation",
                      "CREATE INDEX transactions_by_revocation ON transactions (revocation_date)",
                      "DROP INDEX subscription_summaries_by_end",
                      "CREATE INDEX subscription_summaries_by_end ON subscription_summaries (standing_expires_date)",
                      "DELETE FROM schema_version WHERE version > 6"):
        table(location, statement)


def downgrade_to_schema_5(location):
    """What a store of schema 5 held: no summaries nor period columns, version 5."""
    downgrade_to_schema_6(location)
    for statement in ("DROP TABLE subscription_summaries", "DROP INDEX transactions_by_purchase",
                      "DROP INDEX transactions_by_revocation",
                      *(f"ALTER TABLE transactions DROP COLUMN {column}" for column in SCHEMA_6_COLUMNS),
                      "DELETE FROM schema_version WHERE version > 5"):
        table(location, statement)
