"""Store schema 5: each stored transaction's and renewal info's facts (dates, product type, price
and currency, offer, revocation, environment, renewal status) as columns beside its JWS, derived
from it when it is accepted and, in a store of schema 4, when the store migrates in place."""

import base64
import json
import sqlite3
import subprocess

from test_notifications import (ORIGINAL, TOKEN, mint_jws, new_store, news_ca, now, post,  # noqa: F401 (fixtures)
                                postgres, store_server, table)

# The reference: the payload member each column holds, and how (dates and integers as numbers,
# booleans 1 or 0, text as it is; absent or of another type: NULL).
TRANSACTION_FACTS = {
    "purchase_date": ("purchaseDate", "number"), "original_purchase_date": ("originalPurchaseDate", "number"),
    "expires_date": ("expiresDate", "number"), "revocation_date": ("revocationDate", "number"),
    "revocation_reason": ("revocationReason", "number"), "revocation_type": ("revocationType", "text"),
    "revocation_percentage": ("revocationPercentage", "number"), "product_type": ("type", "text"),
    "environment": ("environment", "text"), "in_app_ownership_type": ("inAppOwnershipType", "text"),
    "transaction_reason": ("transactionReason", "text"), "is_upgraded": ("isUpgraded", "boolean"),
    "offer_type": ("offerType", "number"), "offer_discount_type": ("offerDiscountType", "text"),
    "offer_period": ("offerPeriod", "text"), "price": ("price", "number"), "currency": ("currency", "text"),
    "storefront": ("storefront", "text"),
}
RENEWAL_FACTS = {
    "auto_renew_status": ("autoRenewStatus", "number"), "auto_renew_product_id": ("autoRenewProductId", "text"),
    "product_id": ("productId", "text"), "expiration_intent": ("expirationIntent", "number"),
    "is_in_billing_retry_period": ("isInBillingRetryPeriod", "boolean"),
    "grace_period_expires_date": ("gracePeriodExpiresDate", "number"), "renewal_date": ("renewalDate", "number"),
    "renewal_price": ("renewalPrice", "number"), "currency": ("currency", "text"), "environment": ("environment", "text"),
}
TABLES = (("transactions", "transaction_id", TRANSACTION_FACTS), ("renewal_infos", "original_transaction_id", RENEWAL_FACTS))


def payload_of(jws):
    return json.loads(base64.urlsafe_b64decode(jws.split(".")[1] + "=="))


def reference(jws, facts):
    """The columns' values as `table()` reads them (text; NULL as '')."""
    payload, row = payload_of(jws), []
    for member, kind in facts.values():
        value = payload.get(member)
        if kind == "number":
            row.append(str(int(value)) if isinstance(value, (int, float)) and not isinstance(value, bool) else "")
        elif kind == "boolean":
            row.append(str(int(value)) if isinstance(value, bool) else "")
        else:
            row.append(value if isinstance(value, str) else "")
    return tuple(row)


def assert_facts_derived(location, at_least):
    """Every row's columns equal the reference derivation from its JWS; returns the rows checked."""
    checked = 0
    for name, key, facts in TABLES:
        rows = table(location, f"SELECT jws, {', '.join(facts)} FROM {name} ORDER BY {key}")
        for jws, *values in rows:
            assert tuple(values) == reference(jws, facts), (name, payload_of(jws))
        checked += len(rows)
    assert checked >= at_least
    return checked


def minted_story(mint_jws, news_ca, now):
    """The subscription story, its first purchase a free trial and its refund a prorated one,
    so that every fact column has a value somewhere."""
    _, chains = news_ca
    story = mint_jws.notification_story(ORIGINAL, TOKEN, now=now)
    story[0][1]["data"]["signedTransactionInfo"].update(
        {"offerType": 1, "offerDiscountType": "FREE_TRIAL", "offerPeriod": "P1W", "isUpgraded": False})
    story[4][1]["data"]["signedTransactionInfo"].update({"revocationType": "REFUND_PRORATED", "revocationPercentage": 50000})
    story[6][1]["data"]["signedRenewalInfo"].update({"renewalPrice": 4990, "currency": "USD"})
    return [mint_jws.sign_notification(payload, chains) for _, payload in story]


def subscription_read(server):
    """The story's subscription as the server reads it, but for the instant of the read."""
    status, answer = server.json("GET", f"/v1/subscriptions/{ORIGINAL}")
    assert status == 200
    answer.pop("at_ms")
    return answer


def downgrade_to_schema_4(location):
    """What a store of schema 4 held: no fact columns, version 4."""
    for name, _, facts in TABLES:
        drops = ", ".join(f"DROP COLUMN {column}" for column in facts)
        if str(location).startswith("postgres://"):
            table(location, f"ALTER TABLE {name} {drops}")
        else:
            with sqlite3.connect(location) as connection:
                for column in facts:  # SQLite drops one column per statement
                    connection.execute(f"ALTER TABLE {name} DROP COLUMN {column}")
    table(location, "DELETE FROM schema_version WHERE version > 4")


def test_facts_are_derived_when_accepted_and_when_a_schema_4_store_migrates(tmp_path, news_ca, test_ca, mint_jws, now,
                                                                            new_store):
    location = new_store()
    server = store_server(tmp_path, news_ca, test_ca, store=location)
    try:
        for body in minted_story(mint_jws, news_ca, now):
            assert post(server, body)[0] == 200
        before = subscription_read(server)
    finally:
        server.stop()
    assert_facts_derived(location, at_least=4)  # three transactions and a renewal info
    assert table(location, "SELECT count(*) FROM transactions WHERE offer_discount_type = 'FREE_TRIAL' "
                           "AND revocation_type IS NULL") == [("1",)]
    assert table(location, "SELECT revocation_percentage FROM transactions WHERE revocation_type = 'REFUND_PRORATED'") == [("50000",)]

    # A store of schema 4: the rows of the story, 1,200 more (past the migration's pages of 500)
    # and one whose JWS was edited by hand (it keeps NULLs; the store still opens).
    downgrade_to_schema_4(location)
    table(location, """
        WITH RECURSIVE counter(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM counter WHERE n < 1200)
        INSERT INTO transactions (transaction_id, original_transaction_id, product_id, app_account_token, signed_date, jws)
        SELECT 'copy-' || n, '9100000000000001', NULL, NULL, 1,
               (SELECT jws FROM transactions ORDER BY signed_date LIMIT 1) FROM counter""")
    table(location, "INSERT INTO transactions (transaction_id, original_transaction_id, signed_date, jws) "
                    "VALUES ('edited', '9100000000000002', 1, 'not.a.jws')")
    server = store_server(tmp_path, news_ca, test_ca, store=location)
    try:
        assert subscription_read(server) == before
    finally:
        server.stop()
    assert table(location, "SELECT max(version) FROM schema_version") == [("5",)]
    assert table(location, "SELECT purchase_date, price FROM transactions WHERE transaction_id = 'edited'") == [("", "")]
    table(location, "DELETE FROM transactions WHERE transaction_id = 'edited'")
    assert assert_facts_derived(location, at_least=1204) >= 1204
    assert table(location, "SELECT count(*) FROM transactions WHERE transaction_id LIKE 'copy-%' AND offer_period = 'P1W'") \
        == [("1200",)]
