"""Store schema 5: each stored transaction's and renewal info's facts (dates, product type, price
and currency, offer, revocation, environment, renewal status) as columns beside its JWS, derived
from it when it is accepted and, in a store of schema 4, when the store migrates in place."""

import base64
import copy
import datetime
import decimal
import io
import json
import random
import sqlite3
import subprocess
import time
import urllib.parse

from store_tables import SCHEMA_6_COLUMNS, SCHEMA_VERSION, downgrade_to_schema_5, downgrade_to_schema_13, \
    downgrade_to_schema_14, downgrade_to_schema_15
from test_serve import CLI
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
    "storefront": ("storefront", "text"), "bundle_id": ("bundleId", "text"),
}
RENEWAL_FACTS = {
    "auto_renew_status": ("autoRenewStatus", "number"), "auto_renew_product_id": ("autoRenewProductId", "text"),
    "product_id": ("productId", "text"), "expiration_intent": ("expirationIntent", "number"),
    "is_in_billing_retry_period": ("isInBillingRetryPeriod", "boolean"),
    "grace_period_expires_date": ("gracePeriodExpiresDate", "number"), "renewal_date": ("renewalDate", "number"),
    "renewal_price": ("renewalPrice", "number"), "currency": ("currency", "text"), "environment": ("environment", "text"),
}
TABLES = (("transactions", "transaction_id", TRANSACTION_FACTS), ("renewal_infos", "original_transaction_id", RENEWAL_FACTS))


#: Apple's subscription statuses by number, as `receipt stats-sql subscriptions` gives them.
STATUS_NAMES = {1: "active", 2: "expired", 3: "billing_retry", 4: "grace_period", 5: "revoked"}


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
    downgrade_to_schema_5(location)
    for name, _, facts in TABLES:
        facts = [column for column in facts if column != "bundle_id"]  # schema 10's, dropped by downgrade_to_schema_9
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
    vacuumed = "SELECT relname FROM pg_stat_user_tables WHERE last_vacuum IS NOT NULL AND last_analyze IS NOT NULL"
    is_postgres = str(location).startswith("postgres")
    if is_postgres:
        assert table(location, vacuumed) == []  # a new store is not vacuumed: it holds nothing yet
    server = store_server(tmp_path, news_ca, test_ca, store=location)
    try:
        assert subscription_read(server) == before
    finally:
        server.stop()
    assert table(location, "SELECT max(version) FROM schema_version") == [(SCHEMA_VERSION,)]
    if is_postgres:  # an upgrade rewrote the rows: statistics and visibility made again (the stopped server's stats are flushed)
        wanted = {"transactions", "renewal_infos", "subscription_summaries", "subscription_flow_days", "subscription_active_days",
                  "subscription_mrr_moves", "subscription_moves"}
        deadline = time.monotonic() + 10
        while {name for (name,) in table(location, vacuumed)} != wanted and time.monotonic() < deadline:
            time.sleep(0.2)
        assert {name for (name,) in table(location, vacuumed)} == wanted
    assert table(location, "SELECT purchase_date, price FROM transactions WHERE transaction_id = 'edited'") == [("", "")]
    # Schema 6's summaries were made from every row held: one per subscription with an auto-renewable transaction.
    assert table(location, "SELECT count(*) FROM subscription_summaries") == table(
        location, "SELECT count(DISTINCT original_transaction_id) FROM transactions "
                  "WHERE product_type = 'Auto-Renewable Subscription'") == [("2",)]
    table(location, "DELETE FROM transactions WHERE transaction_id = 'edited'")
    assert assert_facts_derived(location, at_least=1204) >= 1204
    assert table(location, "SELECT count(*) FROM transactions WHERE transaction_id LIKE 'copy-%' AND offer_period = 'P1W'") \
        == [("1200",)]


DAY = 86_400_000


def shaped_stories(mint_jws, news_ca, now):
    """Subscriptions in every status at `now`, as minted notifications: (original id, bodies)."""
    _, chains = news_ca
    shapes = [  # (original id, the story's own `now`, notifications kept, product, the last renewal info's grace end)
        ("2100000000010000", now, 7, None, None),  # its renewal failed 5 days ago: grace period
        ("2100000000020000", now, 7, None, now - 4 * DAY),  # the grace ended 4 days ago, still retried: billing retry
        ("2100000000030000", now + 50 * DAY, 2, "com.example.minted.yearly", None),  # renewed 15 days ago: active
        ("2100000000040000", now + 40 * DAY, 5, None, None),  # its current period refunded: revoked
        ("2100000000050000", now + 20 * DAY, 2, None, None),  # bought, renewed once, then nothing: expired
        ("2100000000060000", now + 50 * DAY, 2, "com.example.minted.annual", None),  # renewed for a year, in EUR: active
        ("2100000000070000", now, 6, None, None),  # its third period began three days late: a recovery
        ("2100000000080000", now + 40 * DAY, 2, None, None),  # bought again ten days after it ended: a reactivation
    ]
    stories = []
    for original, story_now, kept, product, grace_end in shapes:
        story = mint_jws.notification_story(original, TOKEN, now=story_now)[:kept]
        for _, notification in story:
            if product:
                notification["data"]["signedTransactionInfo"]["productId"] = product
        if grace_end:
            story[-1][1]["data"]["signedRenewalInfo"]["gracePeriodExpiresDate"] = grace_end
        first = story[0][1]["data"]["signedTransactionInfo"]
        if original == "2100000000010000":  # began with a free week
            first.update({"offerType": 1, "offerDiscountType": "FREE_TRIAL", "offerPeriod": "P1W", "price": 0})
        if original in ("2100000000070000", "2100000000080000"):
            late = story[-1][1]["data"]["signedTransactionInfo"]
            gap = (3 if original == "2100000000070000" else 10) * DAY
            late.update({"purchaseDate": late["purchaseDate"] + gap, "expiresDate": late["expiresDate"] + gap})
            if original == "2100000000080000":
                late["transactionReason"] = "PURCHASE"
        if original == "2100000000040000":  # the refund of its first renewal gave back a quarter
            story[-1][1]["data"]["signedTransactionInfo"].update({"revocationType": "REFUND_PRORATED",
                                                                   "revocationPercentage": 25000})
        if product == "com.example.minted.annual":
            renewal = story[-1][1]["data"]["signedTransactionInfo"]
            renewal.update({"expiresDate": renewal["purchaseDate"] + 365 * DAY, "price": 39990, "currency": "EUR"})
        stories.append((original, [mint_jws.sign_notification(payload, chains) for _, payload in story]))
    return stories


def shaped_server(tmp_path, news_ca, test_ca, mint_jws, now, new_store):
    """A server holding shaped_stories, and each subscription's state as /v1/subscriptions/{id}
    (the core's SubscriptionState) gives it: the reference the figures are checked against."""
    location = new_store()
    server = store_server(tmp_path, news_ca, test_ca, store=location)
    server.location = location
    try:
        stories = shaped_stories(mint_jws, news_ca, now)
        for _, bodies in stories:
            for body in bodies:
                assert post(server, body)[0] == 200
        states = {}
        for original, _ in stories:
            status, states[original] = server.json("GET", f"/v1/subscriptions/{original}")
            assert status == 200, (original, states[original])
    except BaseException:
        server.stop()
        raise
    return server, states


def test_subscriptions_by_product_and_status_equal_each_subscriptions_state(tmp_path, news_ca, test_ca, mint_jws, now,
                                                                           new_store):
    """GET /v1/stats/subscriptions counts each subscription as /v1/subscriptions/{id} (the core's
    SubscriptionState) judges it, by the product of the period that decides it."""
    server, states = shaped_server(tmp_path, news_ca, test_ca, mint_jws, now, new_store)
    try:
        reference = {}
        for state in states.values():
            product = payload_of(state["signedTransactionInfo"])["productId"]
            reference.setdefault(product, {}).setdefault(state["status_name"], 0)
            reference[product][state["status_name"]] += 1
        assert {status for counts in reference.values() for status in counts} == {"active", "grace_period", "billing_retry",
                                                                                    "expired", "revoked"}
        status, figures = server.json("GET", "/v1/stats/subscriptions")
        assert status == 200
        statuses = ("active", "grace_period", "billing_retry", "expired", "revoked")
        by_product = {entry.pop("product_id"): entry for entry in figures["by_product"]}
        assert set(by_product) == set(reference)
        for product, counts in by_product.items():
            assert {name: counts[name] for name in statuses} == {name: reference[product].get(name, 0) for name in statuses}
            assert counts["entitled"] == counts["active"] + counts["grace_period"]
        assert figures["total"]["entitled"] == sum(entry["entitled"] for entry in by_product.values())
        assert abs(figures["at_ms"] - now) < 600_000
        # At an instant before any purchase nothing is active; arguments are checked; reads take the token.
        status, early = server.json("GET", "/v1/stats/subscriptions?at=2008-01-01")  # the earliest instant taken
        assert status == 200 and early["at_ms"] == 1_199_145_600_000 and early["total"]["active"] == 0
        # The summaries the store keeps at each write equal the same made afresh from the rows:
        # `receipt stats-sql` (the statement over the rows) run by the store's own database.
        sql = subprocess.run([CLI, "stats-sql", "subscriptions", "--at", str(figures["at_ms"])], check=True,
                             capture_output=True, text=True).stdout
        afresh = sorted((product, STATUS_NAMES[int(status)], int(count)) for product, status, count in table(server.location, sql))
        assert afresh == sorted((product, name, counts[name]) for product, counts in by_product.items()
                                for name in statuses if counts[name])
        # One product's figures: its row alone, and the answer says which.
        status, yearly = server.json("GET", "/v1/stats/subscriptions?product=com.example.minted.yearly")
        assert status == 200 and yearly["product_id"] == "com.example.minted.yearly"
        assert [entry["product_id"] for entry in yearly["by_product"]] == ["com.example.minted.yearly"]
        assert yearly["total"]["active"] == reference["com.example.minted.yearly"]["active"] == 1
        assert server.json("GET", "/v1/stats/subscriptions?product=com.example.none")[1]["total"]["entitled"] == 0
        assert server.json("GET", "/v1/stats/subscriptions?product=a%01b")[0] == 400
        assert server.json("GET", "/v1/stats/subscriptions?product=" + "p" * 256)[0] == 400
        assert server.json("GET", "/v1/stats/subscriptions?at=soon")[0] == 400
        assert server.json("GET", "/v1/stats/nonsense")[0] == 404
        assert server.json("GET", "/v1/stats/subscriptions", token=None)[0] == 401
        assert server.request("POST", "/v1/stats/subscriptions", b"{}")[0] == 405
    finally:
        server.stop()


# The reference's billing periods: (name, days from, days to, periods per month as a fraction).
PERIODS = [("week", 7, 7, 52, 12), ("month", 28, 31, 1, 1), ("two_months", 59, 62, 1, 2), ("three_months", 89, 92, 1, 3),
           ("six_months", 181, 184, 1, 6), ("year", 365, 366, 1, 12)]


def mrr_of(periods, product=None):
    """/v1/stats/mrr's currencies from the standing periods (transaction payloads) of the active subscriptions."""
    sums = {}
    for period in periods:
        if product not in (None, period["productId"]):
            continue
        days = (period["expiresDate"] - period["purchaseDate"] + DAY // 2) // DAY
        name, _, _, numerator, denominator = next(p for p in PERIODS if p[1] <= days <= p[2])
        entry = sums.setdefault(period["currency"], {}).setdefault(name, [0, 0, numerator, denominator])
        entry[0] += 1
        entry[1] += period["price"]
    return [{"currency": currency,
             "mrr_milliunits": sum((total * numerator * 2 + denominator) // (denominator * 2)
                                   for _, total, numerator, denominator in periods.values()),
             "subscriptions": sum(count for count, *_ in periods.values()),
             "by_period": {name: periods[name][0] for name, *_ in PERIODS if name in periods}}
            for currency, periods in sorted(sums.items())]


def status_as_it_stood(periods, renewal, at):
    """The reference for a past instant, written from Apple's definitions over the minted payloads
    (not from the server): (status name, the period that decides it), or None before the first
    purchase. Of the periods bought by `at` (refunds as known now): active while one not refunded
    covers it; else revoked when the last bought was refunded; else, when nothing was bought after
    `at`, the renewal info's grace period, then billing retry; else expired."""
    bought = [period for period in periods if period["purchaseDate"] <= at]
    if not bought:
        return None
    standing = [period for period in bought if "revocationDate" not in period]
    covering = [period for period in standing if period["purchaseDate"] <= at < period["expiresDate"]]
    if covering:
        return "active", max(covering, key=lambda period: period["expiresDate"])
    last = max(bought, key=lambda period: period["purchaseDate"])
    if "revocationDate" in last:
        return "revoked", last
    if len(bought) == len(periods):
        if at < renewal.get("gracePeriodExpiresDate", at):
            return "grace_period", last
        if renewal.get("isInBillingRetryPeriod"):
            return "billing_retry", last
    return "expired", last


def ten_monthly_stories(mint_jws, news_ca, now):
    """Ten monthly subscriptions bought 10 days apart, each with a refunded second period and a
    failed renewal into a grace period, every third in EUR at another price: (original id, bodies)."""
    _, chains = news_ca
    stories = []
    for number in range(10):
        original = str(2300000000000000 + number * 1000)
        story = mint_jws.notification_story(original, TOKEN, now=now - number * 10 * DAY)
        for _, notification in story:
            if number % 3 == 0:
                notification["data"]["signedTransactionInfo"].update({"currency": "EUR", "price": 3990})
        stories.append((original, [mint_jws.sign_notification(notification, chains) for _, notification in story]))
    return stories


def test_a_past_instant_is_judged_by_the_periods_that_covered_it(tmp_path, news_ca, test_ca, mint_jws, now, new_store):
    """/v1/stats/subscriptions and /mrr at past instants, every 10 days over 200, against
    status_as_it_stood over the minted payloads: ten monthly subscriptions bought 10 days apart
    (each: a refunded second period, a failed renewal into a grace period; every third in EUR at
    another price). Judged by their latest periods, nearly none would be active in the past."""
    location = new_store()
    server = store_server(tmp_path, news_ca, test_ca, store=location)
    try:
        stories = ten_monthly_stories(mint_jws, news_ca, now)
        for _, bodies in stories:
            for body in bodies:
                assert post(server, body)[0] == 200
        transactions, renewals = latest_copies(stories)
        subscriptions = [([t for t in transactions.values() if t["originalTransactionId"] == original], renewals[original])
                         for original, _ in stories]
        statuses = ("active", "grace_period", "billing_retry", "expired", "revoked")
        active_seen = set()
        for days in range(0, 201, 10):
            at = now - days * DAY - 1
            judged = [status_as_it_stood(periods, renewal, at) for periods, renewal in subscriptions]
            expected = {name: sum(1 for found in judged if found and found[0] == name) for name in statuses}
            figures = server.json("GET", f"/v1/stats/subscriptions?at={at}")[1]
            assert {name: figures["total"][name] for name in statuses} == expected, (days, figures["total"])
            mrr = server.json("GET", f"/v1/stats/mrr?at={at}")[1]
            assert mrr["currencies"] == mrr_of([found[1] for found in judged if found and found[0] == "active"]), days
            active_seen.add(expected["active"])
        assert max(active_seen) >= 5 and len(active_seen) > 3  # the instants see the figures rise and fall
    finally:
        server.stop()


def test_mrr_per_currency_equals_a_reference_from_each_subscriptions_state(tmp_path, news_ca, test_ca, mint_jws, now,
                                                                          new_store):
    """GET /v1/stats/mrr: for the subscriptions /v1/subscriptions/{id} says are active, each
    standing period's price by currency and period length, made monthly."""
    server, states = shaped_server(tmp_path, news_ca, test_ca, mint_jws, now, new_store)

    def reference_mrr(product=None):
        return mrr_of([state["transaction_info"] for state in states.values() if state["status_name"] == "active"], product)
    try:
        reference = reference_mrr()
        assert [line["currency"] for line in reference] == ["EUR", "USD"]
        status, mrr = server.json("GET", "/v1/stats/mrr")
        assert status == 200
        assert mrr["currencies"] == reference
        for product in ("com.example.minted.annual", "com.example.minted.yearly", "com.example.minted.monthly"):
            status, one = server.json("GET", f"/v1/stats/mrr?product={product}")
            assert status == 200 and one["product_id"] == product and one["currencies"] == reference_mrr(product), product
        assert len(reference_mrr("com.example.minted.annual")) == 1
        assert mrr["currencies"][0] == {"currency": "EUR", "mrr_milliunits": 3333, "subscriptions": 1, "by_period": {"year": 1}}
        assert mrr["unclassified"] == {"subscriptions": 0, "currencies": []}
        assert server.json("GET", "/v1/stats/mrr?at=2008-01-01")[1]["currencies"] == []
    finally:
        server.stop()


def test_subscriptions_and_mrr_at_every_boundary_equal_the_statement_over_the_rows(tmp_path, news_ca, test_ca, mint_jws,
                                                                                     now, new_store):
    """At each instant where a subscription's status can change (a standing period's purchase and
    end, a grace period's end, a millisecond either side, the UTC day each falls in), the figures
    equal `receipt stats-sql` over the rows, run by the store's own database: what a store keeps
    for its figures (summaries now, anything kept per day later) must answer as the rows do."""
    server, _ = shaped_server(tmp_path, news_ca, test_ca, mint_jws, now, new_store)
    marker = "1424242424242"
    statements = {figure: subprocess.run([CLI, "stats-sql", figure, "--at", marker], check=True, capture_output=True,
                                         text=True).stdout for figure in ("subscriptions", "mrr")}
    assert all(marker in sql for sql in statements.values())
    try:
        boundaries = {value for row in table(server.location, "SELECT standing_purchase_date, standing_expires_date, "
                                                             "grace_period_expires_date FROM subscription_summaries")
                      for value in map(int, filter(None, row))}
        instants = sorted({instant for value in boundaries
                           for instant in (value - 1, value, value + 1, value // DAY * DAY, value // DAY * DAY + DAY - 1)})
        assert len(instants) > 40
        statuses = ("active", "grace_period", "billing_retry", "expired", "revoked")
        for at in instants:
            rows = table(server.location, statements["subscriptions"].replace(marker, str(at)))
            expected = sorted((product, STATUS_NAMES[int(status)], int(count)) for product, status, count in rows)
            figures = server.json("GET", f"/v1/stats/subscriptions?at={at}")[1]
            answered = sorted((entry["product_id"], name, entry[name]) for entry in figures["by_product"]
                              for name in statuses if entry[name])
            assert answered == expected, at
            prices = {}
            for currency, length, count, _ in table(server.location, statements["mrr"].replace(marker, str(at))):
                days = (int(length) + DAY // 2) // DAY
                name = next((p[0] for p in PERIODS if p[1] <= days <= p[2]), None)
                prices.setdefault(currency, {}).setdefault(name, 0)
                prices[currency][name] += int(count)
            mrr = server.json("GET", f"/v1/stats/mrr?at={at}")[1]
            assert {line["currency"]: line["by_period"] for line in mrr["currencies"]} == {
                currency: {name: count for name, count in periods.items() if name} for currency, periods in prices.items()
                if any(name for name in periods)}, at
    finally:
        server.stop()


def latest_copies(stories):
    """The stored copies of the minted transactions and renewal infos: the latest signing of each."""
    transactions, renewals = {}, {}
    for _, bodies in stories:
        for body in bodies:
            data = payload_of(json.loads(body)["signedPayload"])["data"]
            transaction = payload_of(data["signedTransactionInfo"])
            if transaction["signedDate"] >= transactions.get(transaction["transactionId"], {}).get("signedDate", -1):
                transactions[transaction["transactionId"]] = transaction
            renewal = payload_of(data["signedRenewalInfo"])
            if renewal["signedDate"] >= renewals.get(renewal["originalTransactionId"], {}).get("signedDate", -1):
                renewals[renewal["originalTransactionId"]] = renewal
    return transactions, renewals


def month(milliseconds):
    """The first instant of the calendar month (UTC) that holds `milliseconds`."""
    date = datetime.datetime.fromtimestamp(milliseconds / 1000, datetime.timezone.utc)
    return int(datetime.datetime(date.year, date.month, 1, tzinfo=datetime.timezone.utc).timestamp() * 1000)


def months(since, until):
    """The first instants of the calendar months that meet [since, until)."""
    starts, start = [], month(since)
    while start < until:
        starts.append(start)
        date = datetime.datetime.fromtimestamp(start / 1000, datetime.timezone.utc)
        start = month(int(datetime.datetime(date.year + date.month // 12, date.month % 12 + 1, 1,
                                            tzinfo=datetime.timezone.utc).timestamp() * 1000))
    return starts


def refunded_amount(transaction):
    """What a refund or revocation took back: the price times revocationPercentage (milli-percent), else all of it."""
    return transaction["price"] * transaction.get("revocationPercentage", 100000) // 100000


def reference_flows(stories, states, since, until, now, product=None):
    """What happened per calendar month (UTC) of [since, until), from the stored copies of the
    minted transactions (the latest signing of each) and each subscription's state now; with
    `product`, only its periods, refunds and churned subscriptions."""
    transactions, renewals = latest_copies(stories)
    empty = lambda: {"new": 0, "trial_starts": 0, "renewals": 0, "trial_conversions": 0, "recoveries": 0,  # noqa: E731
                     "reactivations": 0, "refunds": {"count": 0, "amounts": {}},
                     "churned": {"voluntary": 0, "billing": 0, "other": 0}}
    intervals = {start: empty() for start in months(since, until)}
    by_subscription = {}
    for transaction in transactions.values():
        by_subscription.setdefault(transaction["originalTransactionId"], []).append(transaction)
    for periods in by_subscription.values():
        periods.sort(key=lambda t: (t["purchaseDate"], t["transactionId"]))
        for index, period in enumerate(periods):
            if not since <= period["purchaseDate"] < until or product not in (None, period["productId"]):
                continue
            counts = intervals[month(period["purchaseDate"])]
            if index == 0:
                counts["new"] += 1
                counts["trial_starts"] += period.get("offerDiscountType") == "FREE_TRIAL"
                continue
            before = periods[index - 1]
            if period["purchaseDate"] <= before["expiresDate"]:
                counts["renewals"] += 1
            elif period["transactionReason"] == "RENEWAL":
                counts["recoveries"] += 1
            else:
                counts["reactivations"] += 1
            counts["trial_conversions"] += before.get("offerDiscountType") == "FREE_TRIAL"
    for transaction in transactions.values():
        if since <= transaction.get("revocationDate", -1) < until and product in (None, transaction["productId"]):
            refunds = intervals[month(transaction["revocationDate"])]["refunds"]
            refunds["count"] += 1
            amount = refunded_amount(transaction)
            refunds["amounts"][transaction["currency"]] = refunds["amounts"].get(transaction["currency"], 0) + amount
    for original, state in states.items():
        end = state["transaction_info"]["expiresDate"]
        if state["status_name"] == "expired" and since <= end < until and product in (
                None, state["transaction_info"]["productId"]):
            intent = renewals.get(original, {}).get("expirationIntent")
            intervals[month(end)]["churned"][{1: "voluntary", 2: "billing"}.get(intent, "other")] += 1
    return [dict(counts, start_ms=start, refunds={"count": counts["refunds"]["count"], "amounts": [
        {"currency": currency, "milliunits": amount} for currency, amount in sorted(counts["refunds"]["amounts"].items())]})
        for start, counts in intervals.items()]


def reference_revenue(stories, since, until, product=None):
    """The money per calendar month (UTC) of [since, until) and currency, from the stored copies
    of the minted transactions: the prices of the periods that began, the amounts refunded, net."""
    transactions, _ = latest_copies(stories)
    intervals = {start: {} for start in months(since, until)}

    def line(instant, currency):
        return intervals[month(instant)].setdefault(currency, {
            "currency": currency, "gross_milliunits": 0, "refunded_milliunits": 0, "periods": 0, "refunds": 0})
    for transaction in transactions.values():
        if transaction["type"] != "Auto-Renewable Subscription" or product not in (None, transaction["productId"]):
            continue
        if since <= transaction["purchaseDate"] < until:
            began = line(transaction["purchaseDate"], transaction["currency"])
            began["periods"] += 1
            began["gross_milliunits"] += transaction["price"]
        if since <= transaction.get("revocationDate", -1) < until:
            refunded = line(transaction["revocationDate"], transaction["currency"])
            refunded["refunds"] += 1
            refunded["refunded_milliunits"] += refunded_amount(transaction)
    return [{"start_ms": start, "currencies": [dict(entry, net_milliunits=entry["gross_milliunits"] - entry["refunded_milliunits"])
                                               for _, entry in sorted(currencies.items())]}
            for start, currencies in intervals.items()]


def assert_per_product_and_refusals(server, figure, reference_of, since, until, now):
    """A figure judged at no instant, by month over [since, until): each of two products' equals its
    reference (`reference_of(product)`) and differs from all products'; `at` and bad ranges refused."""
    everything = reference_of(None)
    for product in ("com.example.minted.monthly", "com.example.minted.annual"):
        status, one = server.json("GET", f"/v1/stats/{figure}?from={since}&to={until}&by=month&product={product}")
        assert status == 200 and one["product_id"] == product
        assert one["intervals"] == reference_of(product), product
        assert one["intervals"] != everything
    for query in (f"at={now}", "by=year", f"from={until}&to={since}", f"from=0&to={until}&by=day"):
        assert server.json("GET", f"/v1/stats/{figure}?{query}")[0] == 400, query


def test_revenue_by_month_equals_a_reference_from_the_same_notifications(tmp_path, news_ca, test_ca, mint_jws, now,
                                                                        new_store):
    """GET /v1/stats/revenue: per month and currency, the prices of the periods that began, the
    amounts refunded (a partial refund among them) and net, as a reference from the same
    notifications gives them; per product; the same sums by day; `at` and bad ranges refused."""
    server, _ = shaped_server(tmp_path, news_ca, test_ca, mint_jws, now, new_store)
    try:
        since, until = now - 200 * DAY, now + 60 * DAY
        status, revenue = server.json("GET", f"/v1/stats/revenue?from={since}&to={until}&by=month")
        assert status == 200
        assert (revenue["from_ms"], revenue["to_ms"], revenue["by"]) == (since, until, "month")
        stories = shaped_stories(mint_jws, news_ca, now)
        reference = reference_revenue(stories, since, until)
        assert revenue["intervals"] == reference
        lines = [line for interval in reference for line in interval["currencies"]]
        assert len({line["currency"] for line in lines}) == 2  # the stories pay in two currencies
        refunded = [t for t in latest_copies(stories)[0].values() if "revocationDate" in t]
        assert any(0 < refunded_amount(t) < t["price"] for t in refunded)  # a partial refund among whole ones
        assert any(refunded_amount(t) == t["price"] > 0 for t in refunded)
        assert sum(line["refunded_milliunits"] for line in lines) == sum(refunded_amount(t) for t in refunded)
        assert sum(line["periods"] for line in lines) > len(stories)  # renewals count as well as first periods
        # By day: the same money, split finer; every day listed.
        by_day = server.json("GET", f"/v1/stats/revenue?from={since}&to={until}&by=day")[1]["intervals"]
        assert len(by_day) == 260 + 1

        def totals(intervals):
            sums = {}
            for interval in intervals:
                for line in interval["currencies"]:
                    held = sums.setdefault(line["currency"], [0, 0, 0])
                    held[0] += line["gross_milliunits"]
                    held[1] += line["refunded_milliunits"]
                    held[2] += line["net_milliunits"]
            return sums
        assert totals(by_day) == totals(reference)
        assert_per_product_and_refusals(server, "revenue", lambda product: reference_revenue(stories, since, until, product),
                                        since, until, now)
    finally:
        server.stop()


RATE_COUNTS = ("paid_periods", "refunded_paid_periods", "new", "new_paying", "trial_starts", "converted_trials")
#: Each rate: its name, then its numerator's and its denominator's count.
RATES = (("refund_rate", "refunded_paid_periods", "paid_periods"), ("conversion_to_paying", "new_paying", "new"),
         ("trial_conversion_rate", "converted_trials", "trial_starts"))


def reference_rates(stories, since, until, product=None, members=None):
    """The rates per calendar month (UTC) of [since, until), from the stored copies of the minted
    transactions, by the periods bought in each month: paid periods and those refunded, first
    periods and first paid ones, free-trial first periods and those whose second period is paid;
    each rate to four places (half up), None without a denominator. `members`, when given, gets each
    count's periods (transaction ids) by the count's name."""
    transactions, _ = latest_copies(stories)
    intervals = {start: dict.fromkeys(RATE_COUNTS, 0) for start in months(since, until)}
    by_subscription = {}
    for transaction in transactions.values():
        by_subscription.setdefault(transaction["originalTransactionId"], []).append(transaction)
    for periods in by_subscription.values():
        periods.sort(key=lambda t: (t["purchaseDate"], t["transactionId"]))
        trial = periods[0].get("offerDiscountType") == "FREE_TRIAL"
        for index, period in enumerate(periods):
            if not since <= period["purchaseDate"] < until or product not in (None, period["productId"]):
                continue
            counts, paid = intervals[month(period["purchaseDate"])], period["price"] > 0
            counted = {"paid_periods": paid, "refunded_paid_periods": paid and "revocationDate" in period, "new": index == 0,
                       "new_paying": paid and (index == 0 or (index == 1 and trial)), "trial_starts": index == 0 and trial,
                       "converted_trials": index == 0 and trial and len(periods) > 1 and periods[1]["price"] > 0}
            for name, counts_it in counted.items():
                counts[name] += counts_it
                if counts_it and members is not None:
                    members.setdefault(name, []).append(period["transactionId"])

    return [dict(counts, start_ms=start, **{name: rate(counts[numerator], counts[denominator])
                                            for name, numerator, denominator in RATES})
            for start, counts in intervals.items()]


def rate(numerator, denominator):
    """`numerator` / `denominator` to four places (half up) as the JSON's number gives it; None without a denominator."""
    if not denominator:
        return None
    return float((decimal.Decimal(numerator) / decimal.Decimal(denominator)).quantize(
        decimal.Decimal("0.0001"), rounding=decimal.ROUND_HALF_UP))


def unconverted_trial(mint_jws, news_ca, now):
    """A subscription that began with a free week and bought nothing after: its one notification."""
    _, chains = news_ca
    _, payload = mint_jws.notification_story("2100000000090000", TOKEN, now=now - 20 * DAY)[0]
    payload["data"]["signedTransactionInfo"].update({"offerType": 1, "offerDiscountType": "FREE_TRIAL",
                                                     "offerPeriod": "P1W", "price": 0})
    return "2100000000090000", [mint_jws.sign_notification(payload, chains)]


def reactivated_then_renewed(mint_jws, news_ca, now):
    """A subscription bought, renewed, bought again ten days after it ended (a reactivation),
    then renewed once more: its run after the first paid period is one period long (the periods
    after the reactivation begin no run of its). Its notifications: (original id, bodies)."""
    _, chains = news_ca
    original = "2100000000095000"
    story = mint_jws.notification_story(original, TOKEN, now=now - 40 * DAY)
    bought, renewed, again = (copy.deepcopy(story[index][1]) for index in (0, 1, 5))  # periods 1, 2 and 3
    late = again["data"]["signedTransactionInfo"]
    late.update({"purchaseDate": late["purchaseDate"] + 10 * DAY, "expiresDate": late["expiresDate"] + 10 * DAY,
                 "transactionReason": "PURCHASE"})
    after = copy.deepcopy(again)
    after["notificationUUID"] = after["notificationUUID"][:-6] + "999999"
    after["signedDate"] += 40 * DAY
    after["data"]["signedRenewalInfo"]["signedDate"] += 40 * DAY
    after["data"]["signedTransactionInfo"].update({
        "transactionId": f"{original}03", "webOrderLineItemId": f"{original}53", "purchaseDate": late["expiresDate"],
        "expiresDate": late["expiresDate"] + 30 * DAY, "transactionReason": "RENEWAL",
        "signedDate": late["signedDate"] + 40 * DAY})
    return original, [mint_jws.sign_notification(payload, chains) for payload in (bought, renewed, again, after)]


def server_with_an_unconverted_trial(tmp_path, news_ca, test_ca, mint_jws, now, new_store):
    """shaped_server, and unconverted_trial's subscription posted to it: (server, every story)."""
    server, _ = shaped_server(tmp_path, news_ca, test_ca, mint_jws, now, new_store)
    try:
        extra = unconverted_trial(mint_jws, news_ca, now)
        for body in extra[1]:
            assert post(server, body)[0] == 200
    except BaseException:
        server.stop()
        raise
    return server, shaped_stories(mint_jws, news_ca, now) + [extra]


def test_rates_by_month_equal_a_reference_from_the_same_notifications(tmp_path, news_ca, test_ca, mint_jws, now,
                                                                      new_store):
    """GET /v1/stats/rates: per month, the refund rate, the conversion to paying and the trial
    conversion rate with the counts they are made of, as a reference from the same notifications
    gives them (a trial converted, one not; a refund; months without a denominator null); per
    product; the same counts by day; `at` and bad ranges refused."""
    server, stories = server_with_an_unconverted_trial(tmp_path, news_ca, test_ca, mint_jws, now, new_store)
    try:
        since, until = now - 200 * DAY, now + 60 * DAY
        status, rates = server.json("GET", f"/v1/stats/rates?from={since}&to={until}&by=month")
        assert status == 200
        assert (rates["from_ms"], rates["to_ms"], rates["by"]) == (since, until, "month")
        members = {}
        reference = reference_rates(stories, since, until, members=members)
        assert rates["intervals"] == reference
        # Each count lists its periods (began=NAME), those of the reference: the trial not converted is a trial start only.
        for name in RATE_COUNTS:
            listed = list_all(server, {"began": name, "from": since, "to": until})["ids"]
            assert sorted(listed) == sorted(members.get(name, [])), name
        totals = {name: sum(interval[name] for interval in reference) for name in RATE_COUNTS}
        assert all(totals.values()), totals
        assert 0 < totals["converted_trials"] < totals["trial_starts"]  # one trial converted, one did not
        assert 0 < totals["refunded_paid_periods"] < totals["paid_periods"]
        assert totals["new_paying"] < totals["new"] + totals["converted_trials"]
        revenue = server.json("GET", f"/v1/stats/revenue?from={since}&to={until}&by=month")[1]["intervals"]
        periods = sum(line["periods"] for interval in revenue for line in interval["currencies"])
        assert totals["paid_periods"] < periods  # the free trials' periods are not paid
        assert any(interval["refund_rate"] is None for interval in rates["intervals"])
        # By day: the same counts, split finer.
        by_day = server.json("GET", f"/v1/stats/rates?from={since}&to={until}&by=day")[1]["intervals"]
        assert {name: sum(interval[name] for interval in by_day) for name in RATE_COUNTS} == totals
        assert_per_product_and_refusals(server, "rates", lambda product: reference_rates(stories, since, until, product),
                                        since, until, now)
    finally:
        server.stop()


def reference_cohorts(stories, since, until, periods=12, product=None, runs=None):
    """The cohorts per calendar month (UTC) of [since, until), from the stored copies of the minted
    transactions: each subscription under the month of its first paid period (its first period
    when paid, its second when paid after a free trial) bought in the range; how many periods it
    continued for after it (renewals and recoveries; a reactivation ends the run); what it paid in
    each currency for all its periods, less refunds; per paying subscription, halves away from zero.
    `runs`, when given, gets each subscription's periods continued."""
    transactions, _ = latest_copies(stories)
    by_subscription = {}
    for transaction in transactions.values():
        if transaction["type"] == "Auto-Renewable Subscription":
            by_subscription.setdefault(transaction["originalTransactionId"], []).append(transaction)
    cohorts = {start: {"subscriptions": 0, "retained": [0] * periods, "currencies": {}} for start in months(since, until)}

    def line(cohort, currency):
        return cohort["currencies"].setdefault(currency, {"currency": currency, "paying": 0, "net_milliunits": 0})
    for periods_held in by_subscription.values():
        periods_held.sort(key=lambda t: (t["purchaseDate"], t["transactionId"]))
        trial = periods_held[0].get("offerDiscountType") == "FREE_TRIAL"
        paid = [index for index in (0, 1)[:len(periods_held)] if periods_held[index]["price"] > 0 and (index == 0 or trial)]
        if not paid:
            continue
        first = paid[0]
        if not since <= periods_held[first]["purchaseDate"] < until or product not in (None, periods_held[first]["productId"]):
            continue
        continued = 0
        for previous, period in zip(periods_held[first:], periods_held[first + 1:]):
            ended = previous.get("expiresDate")  # without one, the next period is a renewal
            if ended is not None and period["purchaseDate"] > ended and period.get("transactionReason") != "RENEWAL":
                break  # bought again after it ended: a reactivation
            continued += 1
        if runs is not None:
            runs[periods_held[0]["originalTransactionId"]] = continued
        cohort = cohorts[month(periods_held[first]["purchaseDate"])]
        cohort["subscriptions"] += 1
        for after in range(min(continued, periods)):
            cohort["retained"][after] += 1
        line(cohort, periods_held[first]["currency"])["paying"] += 1
        for period in periods_held:
            line(cohort, period["currency"])["net_milliunits"] += period["price"] - (
                refunded_amount(period) if "revocationDate" in period else 0)

    def per_paying(entry):
        if not entry["paying"]:
            return None
        return int((decimal.Decimal(entry["net_milliunits"]) / entry["paying"]).quantize(1, rounding=decimal.ROUND_HALF_UP))
    return [{"start_ms": start, "subscriptions": cohort["subscriptions"], "retained": cohort["retained"],
             "retention": [rate(count, cohort["subscriptions"]) for count in cohort["retained"]],
             "currencies": [dict(entry, per_paying_milliunits=per_paying(entry))
                            for _, entry in sorted(cohort["currencies"].items())]}
            for start, cohort in cohorts.items()]


def test_cohorts_by_month_equal_a_reference_from_the_same_notifications(tmp_path, news_ca, test_ca, mint_jws, now,
                                                                        new_store):
    """GET /v1/stats/cohorts: per month of the first paid period, the paying subscriptions, how many
    continued for 1…N periods (a recovery continues a run, a reactivation ends it) and what they
    paid per currency less refunds, as a reference from the same notifications gives them; sizes
    equal to the rates' new_paying; `periods`; per product; CSV equal to JSON; refusals."""
    server, stories = server_with_an_unconverted_trial(tmp_path, news_ca, test_ca, mint_jws, now, new_store)
    try:
        stories.append(reactivated_then_renewed(mint_jws, news_ca, now))
        for body in stories[-1][1]:
            assert post(server, body)[0] == 200
        since, until = now - 500 * DAY, now + 60 * DAY  # every story's first period
        status, cohorts = server.json("GET", f"/v1/stats/cohorts?from={since}&to={until}&by=month")
        assert status == 200
        assert (cohorts["from_ms"], cohorts["to_ms"], cohorts["by"], cohorts["periods"]) == (since, until, "month", 12)
        reference = reference_cohorts(stories, since, until)
        assert cohorts["intervals"] == reference
        sizes = sum(cohort["subscriptions"] for cohort in reference)
        assert sizes == len(stories) - 1  # every story but the unconverted trial paid
        assert 0 < sum(cohort["retained"][0] for cohort in reference) < sizes  # some renewed, some never did
        runs = {}
        reference_cohorts(stories, since, until, runs=runs)
        # What the reference's runs are (the server's equal them, above): a recovery continues a run, a
        # reactivation ends it, and the renewals after a reactivation do not count.
        assert runs["2100000000070000"] == 2  # its third period, a recovery
        assert runs["2100000000080000"] == 0  # its second period, bought again after the first ended
        assert runs["2100000000095000"] == 1  # renewed once, then a reactivation and a renewal of it
        # A cohort's retained (retained=N over its days) lists the first paid periods of the subscriptions whose run
        # is that long: here over the whole range, as many as all cohorts' retained at that place, each with its price.
        first_paid = dict(zip(*(list_all(server, {"began": "new_paying", "from": since, "to": until})[key]
                                for key in ("ids", "amounts"))))
        for periods in (1, 2, 3):
            listed = list_all(server, {"retained": periods, "from": since, "to": until, "limit": 2})
            assert (listed["retained"], listed["from_ms"], listed["to_ms"]) == (periods, since, until), listed
            owners = table(server.location, "SELECT original_transaction_id FROM transactions WHERE transaction_id IN ('"
                           + "', '".join(listed["ids"] or ["none"]) + "')")
            assert sorted(owner for (owner,) in owners) == sorted(original for original, run in runs.items() if run >= periods)
            assert len(listed["ids"]) == sum(cohort["retained"][periods - 1] for cohort in reference)
            assert listed["ids"] or periods > 1  # some renewed (above)
            assert [first_paid[transaction] for transaction in listed["ids"]] == listed["amounts"]
            for cohort, following in zip(cohorts["intervals"], cohorts["intervals"][1:] + [{"start_ms": until}]):
                days = {"retained": periods, "from": max(cohort["start_ms"], since), "to": following["start_ms"]}
                assert len(list_all(server, days)["ids"]) == cohort["retained"][periods - 1], days
        # A cohort's currency line lists its paying (their first paid periods in it) and the periods its subscriptions
        # paid for in it (before or after the first paid one), whose amounts add up to its net.
        for cohort, following in zip(cohorts["intervals"], cohorts["intervals"][1:] + [{"start_ms": until}]):
            for line in cohort["currencies"]:
                days = {"from": max(cohort["start_ms"], since), "to": following["start_ms"]}
                named = line["currency"] or "none"
                listed = list_all(server, dict(days, paying=named, limit=2))
                assert len(listed["ids"]) == line["paying"] and set(listed["ids"]) <= set(first_paid), (line, listed)
                assert all(currency == line["currency"] for _, currency in listed["amounts"]), listed
                paid = list_all(server, dict(days, paid=named, limit=2))
                assert sum(amount for amount, _ in paid["amounts"]) == line["net_milliunits"], (line, paid)
                assert all(currency == line["currency"] for _, currency in paid["amounts"]), paid
        everything = list_all(server, {"paid": "all", "from": since, "to": until})
        assert len(everything["ids"]) == sum(1 for original, periods in stored_subscriptions(stories)[0].items() if original in runs
                                             for period in periods if period["type"] == "Auto-Renewable Subscription")
        assert len(list_all(server, {"paying": "all", "from": since, "to": until})["ids"]) == sizes
        # Of one product, as its cohorts count them (the product of the first paid period; the pages' cursor after it).
        for (product,) in table(server.location, "SELECT DISTINCT product_id FROM transactions "
                                                 "WHERE product_type = 'Auto-Renewable Subscription'"):
            of_product = reference_cohorts(stories, since, until, product=product)
            runs_of_product = {}
            reference_cohorts(stories, since, until, product=product, runs=runs_of_product)
            # What they paid for, of every product: each period of the subscriptions whose first paid period is of it.
            periods_paid = sum(1 for original, periods in stored_subscriptions(stories)[0].items() if original in runs_of_product
                               for period in periods if period["type"] == "Auto-Renewable Subscription")
            for query, expected in (({"retained": 1}, sum(cohort["retained"][0] for cohort in of_product)),
                                    ({"paying": "all"}, sum(cohort["subscriptions"] for cohort in of_product)),
                                    ({"paid": "all"}, periods_paid)):
                listed = list_all(server, dict(query, product=product, limit=1, **{"from": since, "to": until}))
                assert len(listed["ids"]) == expected and listed["product_id"] == product, (product, query, listed)
        for refused in ("0", "121", "x", "1.5", "+1"):
            status, answer = server.json("GET", f"/v1/subscriptions?retained={refused}&from={since}&to={until}")
            assert status == 400 and "retained is a whole number of periods from 1 to 120" in answer["detail"], answer
        for refused, said in (("paying=eur", "paying is all"), ("paid=EUR&at=" + str(since), "no instant judges"),
                              ("paying=EUR&status=active", "each come alone"), ("paid=EUR&paying=EUR", "each come alone")):
            status, answer = server.json("GET", f"/v1/subscriptions?{refused}")
            assert status == 400 and said in answer["detail"], (refused, answer)
        assert "no instant judges" in server.json("GET", f"/v1/subscriptions?retained=1&at={since}")[1]["detail"]
        lines = [line for cohort in reference for line in cohort["currencies"]]
        assert {line["currency"] for line in lines} == {"USD", "EUR"}
        refunded = sum(refunded_amount(t) for t in latest_copies(stories)[0].values() if "revocationDate" in t)
        revenue = server.json("GET", f"/v1/stats/revenue?from={since}&to={until}&by=month")[1]["intervals"]
        gross = sum(line["gross_milliunits"] for interval in revenue for line in interval["currencies"])
        assert 0 < refunded and sum(line["net_milliunits"] for line in lines) == gross - refunded
        # A cohort is the rates' new_paying of the same days.
        rates = server.json("GET", f"/v1/stats/rates?from={since}&to={until}&by=month")[1]["intervals"]
        assert [cohort["subscriptions"] for cohort in cohorts["intervals"]] == [interval["new_paying"] for interval in rates]
        by_day = server.json("GET", f"/v1/stats/cohorts?from={since}&to={until}&by=day&periods=3")[1]
        assert by_day["periods"] == 3 and all(len(cohort["retained"]) == 3 for cohort in by_day["intervals"])
        assert sum(cohort["subscriptions"] for cohort in by_day["intervals"]) == sizes
        two = server.json("GET", f"/v1/stats/cohorts?from={since}&to={until}&by=month&periods=2")[1]
        assert two["intervals"] == reference_cohorts(stories, since, until, periods=2)
        header, rows = csv_rows(server, f"/v1/stats/cohorts?from={since}&to={until}&by=month&periods=2&format=csv")
        assert header[:3] == ["start_ms", "start_date", "subscriptions"] and header[-4] == "currency"
        flat = [(cohort, line) for cohort in two["intervals"] for line in cohort["currencies"] or [None]]
        assert len(rows) == len(flat)
        for row, (cohort, line) in zip(rows, flat):
            assert int(row["start_ms"]) == cohort["start_ms"] and int(row["subscriptions"]) == cohort["subscriptions"]
            assert [int(row["retained_1"]), int(row["retained_2"])] == cohort["retained"]
            assert [row["retention_1"], row["retention_2"]] == ["" if share is None else f"{share:.4f}"
                                                                 for share in cohort["retention"]]
            assert row["currency"] == (line["currency"] if line else "")
            if line:
                assert int(row["net_milliunits"]) == line["net_milliunits"] and int(row["paying"]) == line["paying"]
        for query in ("periods=0", "periods=121", "periods=x", "periods=1&periods=2", "periods=%2B12"):
            assert server.json("GET", f"/v1/stats/cohorts?from={since}&to={until}&{query}")[0] == 400, query
        assert server.json("GET", f"/v1/stats/rates?from={since}&to={until}&periods=2")[0] == 400
        assert_per_product_and_refusals(server, "cohorts", lambda product: reference_cohorts(stories, since, until,
                                                                                             product=product),
                                        since, until, now)
    finally:
        server.stop()


def stored_subscriptions(stories):
    """The stored copies of each subscription's transactions, by original id, and its renewal info's (latest_copies)."""
    transactions, renewals = latest_copies(stories)
    by_subscription = {}
    for transaction in transactions.values():
        by_subscription.setdefault(transaction["originalTransactionId"], []).append(transaction)
    return by_subscription, renewals


def months_read(since, until):
    """Each calendar month (UTC) of [since, until) as (its first instant, the midnight it is read at:
    its end, or the last midnight at or before `until`)."""
    return [(start, min(months(start, start + 32 * DAY)[1], until - until % DAY)) for start in months(since, until)]


def reference_churn(stories, states, since, until, now, product=None):
    """The churn per calendar month (UTC) of [since, until): the subscriptions active at each month's
    first midnight by status_as_it_stood over the stored copies (under the product of the period
    that covered it), the churned of reference_flows, and each rate to four places."""
    by_subscription, renewals = stored_subscriptions(stories)
    churn = []
    for interval in reference_flows(stories, states, since, until, now, product):
        start, churned = interval["start_ms"], interval["churned"]
        judged = [status_as_it_stood(periods, renewals.get(original, {}), start)
                  for original, periods in by_subscription.items()]
        active = sum(1 for found in judged if found and found[0] == "active" and product in (None, found[1]["productId"]))
        churn.append({"start_ms": start, "active_at_start": active, **{f"churned_{name}": churned[name] for name in churned},
                      "churn_rate": rate(sum(churned.values()), active),
                      "voluntary_churn_rate": rate(churned["voluntary"], active),
                      "billing_churn_rate": rate(churned["billing"], active)})
    return churn


def test_churn_by_month_equals_a_reference_from_the_same_notifications(tmp_path, news_ca, test_ca, mint_jws, now,
                                                                      new_store):
    """GET /v1/stats/churn: per month, the subscriptions active at its first midnight (judged by the
    periods bought by then, refunds known now: refunded periods, grace periods, an upgrade to a
    yearly plan, a reactivation), those that churned in it by reason, and the rates, as a reference
    from the same notifications gives them; the active counts equal /v1/stats/subscriptions at each
    month's start and by day at every seventh midnight; per product; CSV equal to JSON; refusals."""
    server, states = shaped_server(tmp_path, news_ca, test_ca, mint_jws, now, new_store)
    try:
        stories = shaped_stories(mint_jws, news_ca, now) + ten_monthly_stories(mint_jws, news_ca, now)
        for original, bodies in stories[-10:]:
            for body in bodies:
                assert post(server, body)[0] == 200
            status, states[original] = server.json("GET", f"/v1/subscriptions/{original}")
            assert status == 200
        since, until = now - 300 * DAY, now + 60 * DAY
        status, churn = server.json("GET", f"/v1/stats/churn?from={since}&to={until}&by=month&at={now}")
        assert status == 200
        assert (churn["from_ms"], churn["to_ms"], churn["by"], churn["at_ms"]) == (since, until, "month", now)
        reference = reference_churn(stories, states, since, until, now)
        assert churn["intervals"] == reference
        assert max(interval["active_at_start"] for interval in reference) >= 5  # the months see several active
        assert sum(interval["churned_billing"] + interval["churned_voluntary"] + interval["churned_other"]
                   for interval in reference) >= 1
        assert any(interval["churn_rate"] for interval in reference)
        assert reference[0]["active_at_start"] == 0 and reference[0]["churn_rate"] is None
        # The same counts as the subscriptions figure judges each start from the rows.
        for interval in churn["intervals"]:
            total = server.json("GET", f"/v1/stats/subscriptions?at={interval['start_ms']}")[1]["total"]
            assert interval["active_at_start"] == total["active"], interval["start_ms"]
        by_day = server.json("GET", f"/v1/stats/churn?from={now - 70 * DAY}&to={now + 40 * DAY}&by=day")[1]["intervals"]
        assert len(by_day) == 111
        for interval in by_day[::7]:
            total = server.json("GET", f"/v1/stats/subscriptions?at={interval['start_ms']}")[1]["total"]
            assert interval["active_at_start"] == total["active"], interval["start_ms"]
        header, rows = csv_rows(server, f"/v1/stats/churn?from={since}&to={until}&by=month&at={now}&format=csv")
        names = ["active_at_start", "churned_voluntary", "churned_billing", "churned_other"]
        rates = ["churn_rate", "voluntary_churn_rate", "billing_churn_rate"]
        assert header == ["start_ms", "start_date", *names, *rates]
        assert [{name: int(row[name]) for name in names} for row in rows] == [
            {name: interval[name] for name in names} for interval in reference]
        assert [[float(row[name]) if row[name] else None for name in rates] for row in rows] == [
            [interval[name] for name in rates] for interval in reference]
        for product in ("com.example.minted.monthly", "com.example.minted.annual"):
            status, one = server.json("GET", f"/v1/stats/churn?from={since}&to={until}&by=month&at={now}&product={product}")
            assert status == 200 and one["product_id"] == product
            assert one["intervals"] == reference_churn(stories, states, since, until, now, product) != reference, product
            for interval in one["intervals"]:
                total = server.json("GET", f"/v1/stats/subscriptions?at={interval['start_ms']}&product={product}")[1]["total"]
                assert interval["active_at_start"] == total["active"], (product, interval["start_ms"])
        for query in ("periods=2", "by=year", f"from={until}&to={since}", f"from=0&to={until}&by=day", "at=soon"):
            assert server.json("GET", f"/v1/stats/churn?{query}")[0] == 400, query
        # Signed dates at the ends of what a store takes, and periods without a purchase date (bought
        # from the start, as a past instant judges them), written in an order that replaces dated
        # copies by undated ones: the counts stay those of the rule, and a migration makes them alike.
        # A date past them is refused (400: sending it again cannot succeed), and nothing of it kept.
        accepted, refused = odd_dates(mint_jws, news_ca, now)
        for body in accepted:
            status, answer = post(server, body)
            assert status == 200 and answer["stored"] is True, answer
        kept = table(server.location, "SELECT count(*) FROM transactions")
        status, answer = post(server, refused)
        assert (status, answer["status"]) == (400, "STORE_REFUSED"), answer
        assert table(server.location, "SELECT count(*) FROM transactions") == kept
        unclassified_seen = 0
        for start in (since, now - 100 * DAY, now):
            midnight = start - start % DAY
            churn = server.json("GET", f"/v1/stats/churn?from={midnight}&to={midnight + DAY}&by=day")[1]["intervals"]
            total = server.json("GET", f"/v1/stats/subscriptions?at={midnight}")[1]["total"]
            assert churn[0]["active_at_start"] == total["active"], midnight
            # So do the active and MRR kept per plan (undated and extreme periods of no plan's length among them).
            active = server.json("GET", f"/v1/stats/active?from={midnight - DAY}&to={midnight}&by=day")[1]["intervals"][-1]
            mrr = server.json("GET", f"/v1/stats/mrr?at={midnight}")[1]
            assert (active["at_ms"], active["active"], active["unclassified"]) == (
                midnight, total["active"], mrr["unclassified"]["subscriptions"]), midnight
            assert [(line["currency"], line["mrr_milliunits"]) for line in active["currencies"]] == [
                (line["currency"], line["mrr_milliunits"]) for line in mrr["currencies"]], midnight
            # The MRR's lines list the subscriptions they count; the active of no plan's length are in none.
            lines = {line["currency"]: line["subscriptions"] for line in mrr["currencies"]}
            assert {currency: len(list_all(server, {"mrr": currency or "none", "at": midnight})["ids"])
                    for currency in lines} == lines, midnight
            on_plans = list_all(server, {"mrr": "all", "at": midnight})["ids"]
            active_ids = list_all(server, {"status": "active", "at": midnight})["ids"]
            assert len(on_plans) == sum(lines.values()) and set(on_plans) <= set(active_ids), midnight
            assert len(active_ids) - len(on_plans) == mrr["unclassified"]["subscriptions"], midnight
            unclassified_seen += mrr["unclassified"]["subscriptions"]
        assert unclassified_seen, "no subscription of no plan's length was active at a midnight asked"
    finally:
        server.stop()
    # Schema 16 made again from the rows, from a store of schema 15, one of 14 and one of 13: what the
    # writes kept, undated copies and extreme dates among them.
    kept, kept_moves, kept_own = active_days(server.location), mrr_moves(server.location), subscription_moves(server.location)
    assert kept_own
    for downgrade in (downgrade_to_schema_15, downgrade_to_schema_14, downgrade_to_schema_13):
        downgrade(server.location)
        store_server(tmp_path, news_ca, test_ca, store=server.location).stop()
        assert table(server.location, "SELECT max(version) FROM schema_version") == [(SCHEMA_VERSION,)]
        assert active_days(server.location) == kept, downgrade.__name__
        assert mrr_moves(server.location) == kept_moves, downgrade.__name__
        assert subscription_moves(server.location) == kept_own, downgrade.__name__


def list_all(server, query):
    """Every page of GET /v1/subscriptions?query, cursor after cursor: the ids in order, and what every page
    said it was (the same on each: `at_ms`, `status`, and a churned list's `churned`, `from_ms` and `to_ms`)."""
    ids, amounts, moved, said, cursor = [], [], [], set(), None
    while True:
        status, answer = server.json("GET", "/v1/subscriptions?" + urllib.parse.urlencode(
            dict(query, **({"cursor": cursor} if cursor else {}))))
        assert status == 200, answer
        # A list of periods (began) names each period's transaction id beside its subscription's.
        listed = answer.pop("subscriptions")
        ids += [item.get("transaction_id", item["original_transaction_id"]) for item in listed]
        # A period names its amount (its price, or the amount refunded), in its currency; so does a move.
        amounts += [(item["amount_milliunits"], item.get("currency", "")) for item in listed if "amount_milliunits" in item]
        moved += [item["moved_at_ms"] for item in listed if "moved_at_ms" in item]  # a move's midnight
        assert all(("amount_milliunits" in item) == ("transaction_id" in item or "moved_at_ms" in item) for item in listed), listed
        cursor = answer.pop("next_cursor", None)
        said.add(tuple(sorted(answer.items())))
        if cursor is None:
            break
    assert len(said) == 1, said
    return dict(next(iter(said)), ids=ids, amounts=amounts, moved=moved)


def reference_active(stories, since, until, product=None):
    """What stood at the end of each calendar month (UTC) of [since, until), read at its last midnight
    not after `until`: the subscriptions active by status_as_it_stood over the stored copies, the free
    trials among them (their standing period's offerDiscountType), and mrr_of their standing periods."""
    by_subscription, renewals = stored_subscriptions(stories)
    intervals = []
    for start, at in months_read(since, until):
        judged = [status_as_it_stood(periods, renewals.get(original, {}), at) for original, periods in by_subscription.items()]
        standing = [found[1] for found in judged
                    if found and found[0] == "active" and product in (None, found[1]["productId"])]
        trials = sum(1 for period in standing if period.get("offerDiscountType") == "FREE_TRIAL")
        intervals.append({"start_ms": start, "at_ms": at, "active": len(standing), "active_trials": trials,
                          "active_paid": len(standing) - trials,
                          "currencies": [{"currency": line["currency"], "mrr_milliunits": line["mrr_milliunits"],
                                          "arr_milliunits": 12 * line["mrr_milliunits"],
                                          "subscriptions": line["subscriptions"]} for line in mrr_of(standing)],
                          "unclassified": 0})
    return intervals


def worth_at(periods, renewal, at):
    """A subscription's MRR at instant `at` as (currency, twelfths of a milliunit), by the rule written
    out apart: its standing period (status_as_it_stood) when active, priced above 0 and of a plan's
    length, its price times the plan's twelfths in a month; else None."""
    found = status_as_it_stood(periods, renewal, at)
    if not found or found[0] != "active" or found[1].get("price", 0) <= 0:
        return None
    period = found[1]
    days = (period["expiresDate"] - period["purchaseDate"] + DAY // 2) // DAY
    plan = next((p for p in PERIODS if p[1] <= days <= p[2]), None)
    return None if plan is None else (period["currency"], period["price"] * 12 * plan[3] // plan[4])


MOVES = ("new", "expansion", "contraction", "churned", "reactivation")


def round_twelfths(twelfths):
    """Twelfths of a milliunit in milliunits, half away from zero."""
    whole = (abs(twelfths) * 2 + 12) // 24
    return -whole if twelfths < 0 else whole


def reference_mrr_movement(stories, since, until, moves=None):
    """The MRR movement per calendar month (UTC) of [since, until), from each month's first midnight
    to the midnight it is read at (as reference_active reads it): at each midnight, each subscription's
    worth_at against the midnight before, classified by MRRMovement's rule written out apart. Each move
    is added to `moves` when given: (midnight, original id, kind, currency, twelfths)."""
    by_subscription, renewals = stored_subscriptions(stories)
    intervals = []
    for start, at in months_read(since, until):
        lines = {}
        for midnight in range(start + DAY, at + 1, DAY):
            for original, periods in by_subscription.items():
                def move(currency, kind, twelfths):
                    line = lines.setdefault(currency, {name: [0, 0] for name in MOVES})
                    line[kind][0] += 1
                    line[kind][1] += twelfths
                    if moves is not None:
                        moves.append((midnight, original, kind, currency, twelfths))
                renewal = renewals.get(original, {})
                before, after = worth_at(periods, renewal, midnight - DAY), worth_at(periods, renewal, midnight)
                if before == after:
                    continue
                if before is None:
                    paid_ended = any("revocationDate" not in p and p.get("price", 0) > 0 and p["expiresDate"] <= midnight - DAY
                                     for p in periods)
                    move(after[0], "reactivation" if paid_ended else "new", after[1])
                elif after is None:
                    move(before[0], "churned", -before[1])
                elif before[0] != after[0]:
                    move(before[0], "churned", -before[1])
                    move(after[0], "reactivation", after[1])
                else:
                    move(after[0], "expansion" if after[1] > before[1] else "contraction", after[1] - before[1])
        intervals.append({"start_ms": start, "at_ms": at, "currencies": [
            dict({f"{kind}_milliunits": round_twelfths(line[kind][1]) for kind in MOVES},
                 net_milliunits=round_twelfths(sum(line[kind][1] for kind in MOVES)),
                 **{kind: line[kind][0] for kind in MOVES}, currency=currency)
            for currency, line in sorted(lines.items())]})
    return intervals


def price_changes(mint_jws, news_ca, now):
    """A monthly subscription renewed at a higher price, then at a lower one (its MRR expands, then
    contracts), none of its periods refunded: (original id, bodies)."""
    _, chains = news_ca
    original = "2100000000097000"
    story = [(name, payload) for name, payload in mint_jws.notification_story(original, TOKEN, now=now - 20 * DAY)
             if payload["notificationType"] != "REFUND"]
    prices = {original: 4990, f"{original}01": 9990, f"{original}02": 2990}
    for _, payload in story:
        payload["data"]["signedTransactionInfo"]["price"] = prices[payload["data"]["signedTransactionInfo"]["transactionId"]]
    return original, [mint_jws.sign_notification(payload, chains) for _, payload in story]


def test_mrr_movement_by_month_equals_a_reference_from_the_same_notifications(tmp_path, news_ca, test_ca, mint_jws, now,
                                                                             new_store):
    """GET /v1/stats/mrr_movement: per month and currency, the MRR that came new, expanded, contracted,
    churned and came back (a price rise and fall, refunded periods leaving gaps, a reactivation, a
    yearly plan, free trials converting, EUR and USD), with how many subscriptions made each move and
    the net, as a reference from the same notifications gives them; the net adds up to the change of
    /v1/stats/active's MRR within rounding; CSV equal to JSON; `product` and `at` refused."""
    server, _ = server_with_an_unconverted_trial(tmp_path, news_ca, test_ca, mint_jws, now, new_store)
    try:
        stories = shaped_stories(mint_jws, news_ca, now) + [unconverted_trial(mint_jws, news_ca, now)]
        extra = ten_monthly_stories(mint_jws, news_ca, now) + [reactivated_then_renewed(mint_jws, news_ca, now),
                                                                price_changes(mint_jws, news_ca, now)]
        for _, bodies in extra:
            for body in bodies:
                assert post(server, body)[0] == 200
        stories += extra
        since, until = now - 300 * DAY, now + 60 * DAY + DAY // 3
        status, movement = server.json("GET", f"/v1/stats/mrr_movement?from={since}&to={until}&by=month")
        assert status == 200 and (movement["from_ms"], movement["to_ms"], movement["by"]) == (since, until, "month")
        reference_moves = []
        reference = reference_mrr_movement(stories, since, until, moves=reference_moves)
        assert movement["intervals"] == reference
        made = {kind for interval in reference for line in interval["currencies"] for kind in MOVES if line[kind]}
        assert made == set(MOVES), made  # the stories make every kind of move
        # The moves of a month take its MRR at the first midnight to its MRR at the one it is read at,
        # within the rounding of each (MRR rounds each plan's sum in a currency, the net its own).
        active = server.json("GET", f"/v1/stats/active?from={since - 40 * DAY}&to={until}&by=month")[1]["intervals"]
        mrr_at = {interval["at_ms"]: {line["currency"]: line["mrr_milliunits"] for line in interval["currencies"]}
                  for interval in active}
        for interval in movement["intervals"]:
            start, end = mrr_at[interval["start_ms"]], mrr_at[interval["at_ms"]]
            for line in interval["currencies"]:
                change = end.get(line["currency"], 0) - start.get(line["currency"], 0)
                assert abs(line["net_milliunits"] - change) <= 2, (interval["start_ms"], line, change)
        header, rows = csv_rows(server, f"/v1/stats/mrr_movement?from={since}&to={until}&by=month&format=csv")
        amounts = [f"{kind}_milliunits" for kind in MOVES] + ["net_milliunits"]
        assert header == ["start_ms", "start_date", "at_ms", "at_date", "currency", *amounts, *MOVES]
        flat = [(interval, line) for interval in reference for line in interval["currencies"]]
        assert [(int(row["start_ms"]), row["currency"], [int(row[name]) for name in amounts + list(MOVES)]) for row in rows] == [
            (interval["start_ms"], line["currency"], [line[name] for name in amounts + list(MOVES)]) for interval, line in flat]
        for query in ("product=com.example.minted.monthly", f"at={now}", "by=year", f"from={until}&to={since}", "periods=2"):
            status, answer = server.json("GET", f"/v1/stats/mrr_movement?{query}")
            assert status == 400, query
        assert "over all of them" in server.json("GET", "/v1/stats/mrr_movement?product=x")[1]["detail"]
        # Each line's count of a kind lists its moves (mrr_KIND=CURRENCY over the interval's start to the midnight
        # it is read at): as many as it counts, in its currency, their amounts adding up to its amount within each
        # one's rounding; the price changes' subscription among the expanded and the contracted, of its product.
        listed_moves = {}
        for interval in movement["intervals"]:
            for line in interval["currencies"]:
                for kind in MOVES:
                    days = {"from": interval["start_ms"], "to": interval["at_ms"], f"mrr_{kind}": line["currency"] or "none"}
                    listed = list_all(server, dict(days, limit=2))
                    # The very moves the reference makes, by midnight then subscription, each its twelfths rounded.
                    expected = sorted((midnight, original, round_twelfths(twelfths))
                                      for midnight, original, made, currency, twelfths in reference_moves
                                      if made == kind and currency == line["currency"]
                                      and interval["start_ms"] < midnight <= interval["at_ms"])
                    assert list(zip(listed["moved"], listed["ids"], [amount for amount, _ in listed["amounts"]])) == expected
                    assert len(listed["ids"]) == line[kind] and all(currency == line["currency"] for _, currency in listed["amounts"])
                    assert abs(sum(moved for moved, _ in listed["amounts"]) - line[f"{kind}_milliunits"]) * 2 <= len(listed["ids"]) + 1
                    listed_moves.setdefault(kind, []).extend(listed["ids"])
        changed, _ = price_changes(mint_jws, news_ca, now)
        assert changed in listed_moves["expansion"] and changed in listed_moves["contraction"]
        whole = {"from": movement["intervals"][0]["start_ms"], "to": movement["intervals"][-1]["at_ms"]}
        for kind in MOVES:
            assert sorted(list_all(server, dict(whole, **{f"mrr_{kind}": "all"}))["ids"]) == sorted(listed_moves[kind]), kind
        assert list_all(server, dict(whole, mrr_new="none"))["ids"] == []  # every story names its currency
        status, page = server.json("GET", "/v1/subscriptions?" + urllib.parse.urlencode(dict(whole, mrr_expansion="all")))
        assert {item["product_id"] for item in page["subscriptions"] if item["original_transaction_id"] == changed} == {
            "com.example.minted.monthly"}, page
        assert all(item["moved_at_ms"] % DAY == 0 and whole["from"] < item["moved_at_ms"] <= whole["to"]
                   for item in page["subscriptions"]), page
        for refused, said in (("mrr_new=all&product=com.example.minted.monthly", "this one is over all of them"),
                              (f"mrr_churned=EUR&at={now}", "no instant judges"), ("mrr_new=eur", "mrr_new is all"),
                              ("mrr_new=all&mrr_churned=all", "each come alone")):
            status, answer = server.json("GET", f"/v1/subscriptions?{refused}")
            assert status == 400 and said in answer["detail"], (refused, answer)
        # By day: no currency line without a move, though refunds and late periods took some back.
        by_day = f"/v1/stats/mrr_movement?from={since}&to={until}&by=day"
        lines = [line for interval in server.json("GET", by_day)[1]["intervals"] for line in interval["currencies"]]
        assert lines and all(any(line[kind] for kind in MOVES) for line in lines)
        # Kept by the differences each write makes: the same notifications shuffled (an earlier period
        # after a later one, a refund before its renewal) give the same moves and the same active
        # counts, and both tables equal what a migration makes from the rows.
        assert_shuffled_arrival_agrees(server, stories, 60, (by_day, f"/v1/stats/active?from={since}&to={until}&by=day"),
                                       lambda location: store_server(tmp_path, news_ca, test_ca, store=location), new_store)
    finally:
        server.stop()


def test_active_trials_and_mrr_at_each_months_end_equal_a_reference(tmp_path, news_ca, test_ca, mint_jws, now,
                                                                    new_store):
    """GET /v1/stats/active: at the end of each month (its last midnight not after `to`), the
    subscriptions active (judged by the periods bought by then, refunds known now), the free trials
    among them, the paid, and MRR and ARR per currency, as a reference from the same notifications
    gives them (two free trials, an unconverted one, EUR and USD, refunded periods, grace periods, a
    yearly plan); equal to /v1/stats/subscriptions and /v1/stats/mrr at the same midnights, by month
    and by day; per product; CSV equal to JSON; refusals."""
    server, _ = server_with_an_unconverted_trial(tmp_path, news_ca, test_ca, mint_jws, now, new_store)
    try:
        stories = shaped_stories(mint_jws, news_ca, now) + [unconverted_trial(mint_jws, news_ca, now)]
        stories += ten_monthly_stories(mint_jws, news_ca, now)
        for _, bodies in stories[-10:]:
            for body in bodies:
                assert post(server, body)[0] == 200
        since, until = now - 300 * DAY, now + 60 * DAY + DAY // 3  # the last month cut by `until`, mid-day
        status, active = server.json("GET", f"/v1/stats/active?from={since}&to={until}&by=month")
        assert status == 200
        assert (active["from_ms"], active["to_ms"], active["by"]) == (since, until, "month") and "at_ms" not in active
        reference = reference_active(stories, since, until)
        assert active["intervals"] == reference
        assert reference[-1]["at_ms"] == until - until % DAY and reference[0]["active"] == 0
        assert max(interval["active"] for interval in reference) >= 5
        assert sum(interval["active_trials"] for interval in reference) >= 1  # a trial stood at some month's end
        assert {line["currency"] for interval in reference for line in interval["currencies"]} == {"USD", "EUR"}
        # The same numbers as the figures judged at one instant give from the rows as of it.
        def assert_as_judged_at(interval, query=""):
            total = server.json("GET", f"/v1/stats/subscriptions?at={interval['at_ms']}{query}")[1]["total"]
            assert interval["active"] == total["active"], interval
            mrr = server.json("GET", f"/v1/stats/mrr?at={interval['at_ms']}{query}")[1]
            assert interval["currencies"] == [{"currency": line["currency"], "mrr_milliunits": line["mrr_milliunits"],
                                               "arr_milliunits": 12 * line["mrr_milliunits"],
                                               "subscriptions": line["subscriptions"]} for line in mrr["currencies"]]
            assert interval["unclassified"] == mrr["unclassified"]["subscriptions"]
        for interval in active["intervals"]:
            assert_as_judged_at(interval)
        by_day = server.json("GET", f"/v1/stats/active?from={now - 70 * DAY}&to={now + 40 * DAY}&by=day")[1]["intervals"]
        assert len(by_day) == 111 and all(i["at_ms"] == i["start_ms"] + DAY for i in by_day[:-1])
        assert by_day[-1]["at_ms"] == by_day[-1]["start_ms"]  # `to` cuts its day: read at that day's midnight
        for interval in by_day[::5]:
            assert_as_judged_at(interval)
        header, rows = csv_rows(server, f"/v1/stats/active?from={since}&to={until}&by=month&format=csv")
        counts = ["active", "active_trials", "active_paid"]
        assert header == ["start_ms", "start_date", "at_ms", "at_date", *counts, "unclassified", "currency", "mrr_milliunits",
                          "arr_milliunits", "subscriptions"]
        flat = [(interval, line) for interval in reference for line in interval["currencies"] or [None]]
        assert len(rows) == len(flat)
        for row, (interval, line) in zip(rows, flat):
            assert int(row["at_ms"]) == interval["at_ms"] and [int(row[name]) for name in counts + ["unclassified"]] == [
                interval[name] for name in counts + ["unclassified"]]
            assert row["currency"] == (line["currency"] if line else "")
            if line:
                assert (int(row["mrr_milliunits"]), int(row["arr_milliunits"]), int(row["subscriptions"])) == (
                    line["mrr_milliunits"], line["arr_milliunits"], line["subscriptions"])
        assert_per_product_and_refusals(server, "active", lambda product: reference_active(stories, since, until, product),
                                        since, until, now)
        for interval in server.json("GET", f"/v1/stats/active?from={since}&to={until}&by=month"
                                           "&product=com.example.minted.annual")[1]["intervals"]:
            assert_as_judged_at(interval, "&product=com.example.minted.annual")
    finally:
        server.stop()


def odd_dates(mint_jws, news_ca, now):
    """Notifications whose dates a past instant must still judge, and one a store refuses: (the
    accepted bodies, the refused one). Accepted: one subscription bought 2^53 ms before 1970 whose
    period ends 2^53 ms after it (the ends of what a store takes); one whose first period comes
    dated, then again without a purchase date (bought from the start), then a renewal without
    one. Refused: one bought at the first 64-bit millisecond."""
    _, chains = news_ca
    bodies = []
    uuids = (f"6f1f4a2e-0000-4000-8000-24000000000{number}" for number in range(5))  # apart from the other stories'
    story = mint_jws.notification_story("2400000000010000", TOKEN, now=now)
    _, extreme = copy.deepcopy(story[0])
    extreme["data"]["signedTransactionInfo"].update({"purchaseDate": -2 ** 53, "originalPurchaseDate": -2 ** 53,
                                                     "expiresDate": 2 ** 53})
    extreme["notificationUUID"] = next(uuids)
    bodies.append(mint_jws.sign_notification(extreme, chains))
    _, past = copy.deepcopy(mint_jws.notification_story("2400000000030000", TOKEN, now=now)[0])
    past["data"]["signedTransactionInfo"].update({"purchaseDate": -2 ** 63, "expiresDate": 2 ** 63 - 1})
    past["notificationUUID"] = next(uuids)
    refused = mint_jws.sign_notification(past, chains)
    story = mint_jws.notification_story("2400000000020000", TOKEN, now=now - 60 * DAY)
    dated = copy.deepcopy(story[0][1])
    undated = copy.deepcopy(dated)
    undated["signedDate"] += DAY
    undated["data"]["signedTransactionInfo"]["signedDate"] += DAY
    del undated["data"]["signedTransactionInfo"]["purchaseDate"]
    renewal = copy.deepcopy(story[1][1])
    del renewal["data"]["signedTransactionInfo"]["purchaseDate"]
    renewal["data"]["signedTransactionInfo"]["expiresDate"] = now + 30 * DAY
    for payload in (dated, undated, renewal):
        payload["notificationUUID"] = next(uuids)
        bodies.append(mint_jws.sign_notification(payload, chains))
    return bodies, refused


def csv_rows(server, path):
    """The CSV answer at `path`: its header row, then its rows as dicts of text."""
    import csv
    status, data, answer = server.request("GET", path)
    assert status == 200 and answer.getheader("Content-Type").startswith("text/csv"), (status, data[:200])
    assert data.endswith(b"\r\n")
    reader = csv.reader(io.StringIO(data.decode(), newline=""))
    header = next(reader)
    return header, [dict(zip(header, row, strict=True)) for row in reader]


def test_each_figure_as_csv_holds_the_json_numbers(tmp_path, news_ca, test_ca, mint_jws, now, new_store):
    """?format=csv: every figure's numbers, as its JSON answer gives them, a row per product,
    currency or interval, with a header row; another format refused."""
    server, _ = shaped_server(tmp_path, news_ca, test_ca, mint_jws, now, new_store)
    try:
        counts = server.json("GET", f"/v1/stats/subscriptions?at={now}")[1]
        header, rows = csv_rows(server, f"/v1/stats/subscriptions?at={now}&format=csv")
        assert header[0] == "product_id"
        expected = counts["by_product"] + [dict(counts["total"], product_id="")]
        assert rows == [{name: str(entry[name]) for name in header} for entry in expected]

        mrr = server.json("GET", f"/v1/stats/mrr?at={now}")[1]
        header, rows = csv_rows(server, f"/v1/stats/mrr?at={now}&format=csv")
        assert len(rows) == len(mrr["currencies"]) >= 2
        for row, line in zip(rows, mrr["currencies"]):
            assert (row["currency"], int(row["mrr_milliunits"]), int(row["subscriptions"])) == (
                line["currency"], line["mrr_milliunits"], line["subscriptions"])
            assert {name: int(row[name]) for name in header[3:] if int(row[name])} == line["by_period"]

        since, until = now - 200 * DAY, now + 60 * DAY
        flows = server.json("GET", f"/v1/stats/flows?from={since}&to={until}&by=month&at={now}")[1]
        header, rows = csv_rows(server, f"/v1/stats/flows?from={since}&to={until}&by=month&at={now}&format=csv")
        assert len(rows) == len(flows["intervals"])
        for row, interval in zip(rows, flows["intervals"]):
            flat = dict(interval, refunds=interval["refunds"]["count"],
                        **{f"churned_{name}": count for name, count in interval["churned"].items()})
            assert {name: int(row[name]) for name in header if name != "start_date"} == {
                name: flat[name] for name in header if name != "start_date"}
            assert row["start_date"] == datetime.datetime.fromtimestamp(
                interval["start_ms"] / 1000, datetime.timezone.utc).strftime("%Y-%m-%d")

        revenue = server.json("GET", f"/v1/stats/revenue?from={since}&to={until}&by=month")[1]
        header, rows = csv_rows(server, f"/v1/stats/revenue?from={since}&to={until}&by=month&format=csv")
        lines = [dict(line, start_ms=interval["start_ms"]) for interval in revenue["intervals"] for line in interval["currencies"]]
        assert len(rows) == len(lines) > 2
        for row, line in zip(rows, lines):
            assert {name: row[name] for name in header if name != "start_date"} == {
                name: str(line[name]) for name in header if name != "start_date"}

        rates = server.json("GET", f"/v1/stats/rates?from={since}&to={until}&by=month")[1]
        header, rows = csv_rows(server, f"/v1/stats/rates?from={since}&to={until}&by=month&format=csv")
        assert len(rows) == len(rates["intervals"]) and header[2:] == [*RATE_COUNTS, *(name for name, _, _ in RATES)]
        for row, interval in zip(rows, rates["intervals"]):
            assert {name: row[name] for name in RATE_COUNTS} == {name: str(interval[name]) for name in RATE_COUNTS}
            assert {name: float(row[name]) if row[name] else None for name, _, _ in RATES} == {
                name: interval[name] for name, _, _ in RATES}

        for path in ("/v1/stats/subscriptions?format=xml", "/v1/stats/revenue?format=CSV", "/dashboard?format=csv"):
            assert server.request("GET", path)[0] == 400, path
    finally:
        server.stop()


def flow_days(location):
    """The counts of periods begun per day, product and currency (schema 13), days that count nothing left out."""
    rows = table(location, "SELECT * FROM subscription_flow_days ORDER BY day, product_id, currency")
    return [row for row in rows if any(value != "0" for value in row[3:])]


def expiry_days(location):
    """The rows of subscription_expiry_days that count something, in key order."""
    rows = table(location, "SELECT * FROM subscription_expiry_days ORDER BY day, product_id, currency, period_length, "
                           "revoked, retry")
    return [row for row in rows if row[6:] != ("0", "0")]


def summaries_and_periods(location):
    """Each subscription's summary and each transaction's period columns, in key order."""
    return (table(location, "SELECT * FROM subscription_summaries ORDER BY original_transaction_id"),
            table(location, "SELECT transaction_id, " + ", ".join(SCHEMA_6_COLUMNS) + " FROM transactions "
                            "ORDER BY transaction_id"))


def active_days(location):
    """The subscriptions active per midnight as changes per day, product, currency, length and trial,
    with their prices (schema 15), in key order, rows that change nothing left out."""
    return [row for row in table(location, "SELECT * FROM subscription_active_days "
                                           "ORDER BY day, product_id, currency, billing_period, free_trial")
            if row[5:] != ("0", "0")]


def mrr_moves(location):
    """Each day's MRR moves per currency and kind with their twelfths (schema 15), rows that move nothing left out."""
    return [row for row in table(location, "SELECT * FROM subscription_mrr_moves ORDER BY day, currency, move")
            if row[3:] != ("0", "0")]


def subscription_moves(location):
    """Each subscription's MRR moves with their twelfths (schema 16), in key order, rows that move nothing left out."""
    return [row for row in table(location, "SELECT * FROM subscription_moves "
                                           "ORDER BY original_transaction_id, day, currency, move, product_id")
            if row[5:] != ("0", "0")]


def assert_kept_tables_made_afresh_agree(location, start_server):
    """What each write kept (the summaries and the periods' numbers, made from the rows a write
    changed; the periods begun per day and the summaries per expiry day, changed by differences)
    equals what a migration (at `start_server()`) makes from all the rows held."""
    kept, kept_expiries, kept_summaries = flow_days(location), expiry_days(location), summaries_and_periods(location)
    kept_active, kept_moves, kept_own = active_days(location), mrr_moves(location), subscription_moves(location)
    assert any(int(row[5]) > 0 for row in kept_active) and any(int(row[3]) > 0 for row in kept_moves)
    # Each subscription's moves add up to the day counts, kind by kind; each row a move made once (a list shows
    # a row once where its count adds up the moves).
    assert kept_own and all(row[5] == "1" for row in kept_own), [row for row in kept_own if row[5] != "1"]
    days = {}
    for _, day, currency, move, _, moves, twelfths in kept_own:
        sums = days.setdefault((day, currency, move), [0, 0])
        sums[0], sums[1] = sums[0] + int(moves), sums[1] + int(twelfths)
    assert sorted((*key, str(sums[0]), str(sums[1])) for key, sums in days.items() if sums != [0, 0]) == sorted(kept_moves)
    assert sum(int(value) for row in kept for value in row[3:]) > 0
    assert sum(int(row[6]) for row in kept_expiries) == int(table(location, "SELECT count(*) FROM subscription_summaries")[0][0])
    downgrade_to_schema_5(location)
    assert table(location, "SELECT max(version) FROM schema_version") == [("5",)]
    start_server().stop()
    assert table(location, "SELECT max(version) FROM schema_version") == [(SCHEMA_VERSION,)]
    assert summaries_and_periods(location) == kept_summaries
    assert flow_days(location) == kept
    assert expiry_days(location) == kept_expiries
    assert active_days(location) == kept_active
    assert mrr_moves(location) == kept_moves
    assert subscription_moves(location) == kept_own


def assert_shuffled_arrival_agrees(server, stories, seed, paths, start_server, new_store):
    """The stories' notifications posted in a shuffled order (`seed`) to a new store (an earlier period
    after a later one, a refund before its renewal) answer each of `paths` as `server` does, and what
    its writes kept equals what a migration makes from its rows (`start_server(location)`)."""
    bodies = [body for _, story_bodies in stories for body in story_bodies]
    random.Random(seed).shuffle(bodies)
    location = new_store()
    shuffled = start_server(location)
    try:
        for body in bodies:
            assert post(shuffled, body)[0] == 200
        for path in paths:
            assert shuffled.json("GET", path) == server.json("GET", path), path
    finally:
        shuffled.stop()
    assert_kept_tables_made_afresh_agree(location, lambda: start_server(location))


def test_flows_by_month_equal_a_reference_from_the_same_notifications(tmp_path, news_ca, test_ca, mint_jws, now, new_store):
    """GET /v1/stats/flows: new subscriptions, trial starts and conversions, renewals,
    recoveries, reactivations, refunds and churn, per month, as a reference derivation from the
    same notifications gives them; every interval present; bad ranges refused."""
    server, states = shaped_server(tmp_path, news_ca, test_ca, mint_jws, now, new_store)
    try:
        since, until = now - 200 * DAY, now + DAY
        status, flows = server.json("GET", f"/v1/stats/flows?from={since}&to={until}&by=month&at={now}")
        assert status == 200
        assert (flows["from_ms"], flows["to_ms"], flows["by"], flows["at_ms"]) == (since, until, "month", now)
        stories = shaped_stories(mint_jws, news_ca, now)
        reference = reference_flows(stories, states, since, until, now)
        assert flows["intervals"] == reference
        totals = {name: sum(interval[name] for interval in reference)
                  for name in ("new", "trial_starts", "trial_conversions", "renewals", "recoveries", "reactivations")}
        assert all(totals.values()), totals  # the stories make every kind happen
        assert sum(interval["refunds"]["count"] for interval in reference) >= 1
        assert sum(sum(interval["churned"].values()) for interval in reference) >= 1
        # By day (201 days from mid-day meet 202 UTC days) and by week: the same events, split finer.
        by_day = server.json("GET", f"/v1/stats/flows?from={since}&to={until}&by=day&at={now}")[1]["intervals"]
        assert len(by_day) == 202 and sum(interval["new"] for interval in by_day) == totals["new"]
        by_week = server.json("GET", f"/v1/stats/flows?from={since}&to={until}&by=week&at={now}")[1]["intervals"]
        assert all(interval["start_ms"] // DAY % 7 == 4 for interval in by_week)  # Mondays (1970-01-01 was a Thursday)
        assert sum(interval["renewals"] for interval in by_week) == totals["renewals"]
        # One product's flows: its own periods, refunds and churn.
        for product in ("com.example.minted.monthly", "com.example.minted.yearly"):
            status, one = server.json("GET", f"/v1/stats/flows?from={since}&to={until}&by=month&at={now}&product={product}")
            assert status == 200 and one["product_id"] == product
            assert one["intervals"] == reference_flows(stories, states, since, until, now, product), product
        assert one["intervals"] != reference
        # The summaries and the periods' numbers are made again at each write: notifications that
        # arrive shuffled (an earlier period after a later one) give the same figures.
        assert_shuffled_arrival_agrees(
            server, stories, 32, (f"/v1/stats/flows?from={since}&to={until}&by=month&at={now}", f"/v1/stats/subscriptions?at={now}",
                                  f"/v1/stats/mrr?at={now}", f"/v1/stats/rates?from={since}&to={until}&by=month",
                                  f"/v1/stats/churn?from={since}&to={until}&by=day&at={now}",
                                  f"/v1/stats/active?from={since}&to={until}&by=day",
                                  f"/v1/stats/mrr_movement?from={since}&to={until}&by=day"),
            lambda location: store_server(tmp_path, news_ca, test_ca, store=location), new_store)
        for query in ("by=year", f"from={until}&to={since}", f"from=0&to={until}&by=day", "from=soon"):
            assert server.json("GET", f"/v1/stats/flows?{query}")[0] == 400, query
    finally:
        server.stop()
