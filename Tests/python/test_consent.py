"""Consent withdrawn: a RESCIND_CONSENT notification (its `appData.signedAppTransactionInfo`
says whose) is stored per app transaction, and `GET /v1/consent/{appTransactionId}` reads it
back, behind the read token, with each store. Notifications are minted by tools/mint_jws.py
with the module's own CA."""
import json
import sqlite3

import pytest

from test_notifications import (mint_jws, new_store, news_ca, now, post, postgres,  # noqa: F401 (fixtures)
                                store_server, table)
from test_serve import Server
from store_tables import SCHEMA_VERSION
from test_store_facts import downgrade_to_schema_4

APP_TRANSACTION_ID = "704289572311"


def app_transaction(now, app_transaction_id=APP_TRANSACTION_ID, **extra):
    return dict({"appAppleId": 1234567890, "bundleId": "com.example.minted", "applicationVersion": "1",
                 "originalApplicationVersion": "1", "originalPurchaseDate": now - 86_400_000, "receiptType": "Sandbox",
                 "receiptCreationDate": now - 86_400_000, "requestDate": now, "signedDate": now,
                 "appTransactionId": app_transaction_id, "originalPlatform": "iOS"}, **extra)


def rescission(mint_jws, news_ca, signed, number, app_transaction_payload=None, **app_data):
    """Apple's POST body of a RESCIND_CONSENT notification signed at `signed`."""
    data = {"appAppleId": 1234567890, "bundleId": "com.example.minted", "environment": "Sandbox"}
    if app_transaction_payload is not None:
        data["signedAppTransactionInfo"] = mint_jws.sign(app_transaction_payload, news_ca[1])
    data.update(app_data)
    notification = {"notificationType": "RESCIND_CONSENT", "notificationUUID": f"9a1c2d3e-0000-4000-8000-{number:012d}",
                    "version": "2.0", "signedDate": signed, "appData": data}
    return json.dumps({"signedPayload": mint_jws.sign(notification, news_ca[1])})


def test_a_rescission_is_stored_and_read_per_app_transaction(tmp_path, news_ca, test_ca, mint_jws, now, new_store):
    store = new_store()
    server = store_server(tmp_path, news_ca, test_ca, store=store)
    try:
        before = server.json("GET", f"/v1/consent/{APP_TRANSACTION_ID}")
        status, answer = post(server, rescission(mint_jws, news_ca, now, 1, app_transaction(now)))
        after = server.json("GET", f"/v1/consent/{APP_TRANSACTION_ID}")
        other = server.json("GET", "/v1/consent/704289572399")
    finally:
        server.stop()
    assert before == (200, {"appTransactionId": APP_TRANSACTION_ID, "consent": "not_rescinded"})
    assert status == 200, answer
    code, consent = after
    assert code == 200 and consent["consent"] == "rescinded", consent
    assert consent["rescinded_at_ms"] == now
    assert consent["notificationUUID"] == "9a1c2d3e-0000-4000-8000-000000000001"
    assert consent["app_transaction_info"]["appTransactionId"] == APP_TRANSACTION_ID
    # The signed app transaction is handed back as Apple signed it, for the reader to verify again.
    assert consent["signedAppTransactionInfo"].count(".") == 2
    assert other == (200, {"appTransactionId": "704289572399", "consent": "not_rescinded"})
    assert table(store, "SELECT app_transaction_id, signed_date FROM consent_rescissions") == [(APP_TRANSACTION_ID, str(now))]


def test_later_news_wins_and_older_news_does_not_overwrite(tmp_path, news_ca, test_ca, mint_jws, now):
    store = tmp_path / "store.db"
    server = store_server(tmp_path, news_ca, test_ca, store=store)
    try:
        assert post(server, rescission(mint_jws, news_ca, now, 2, app_transaction(now)))[0] == 200
        assert post(server, rescission(mint_jws, news_ca, now - 5_000, 3, app_transaction(now - 5_000)))[0] == 200
        kept = server.json("GET", f"/v1/consent/{APP_TRANSACTION_ID}")[1]
        assert post(server, rescission(mint_jws, news_ca, now + 5_000, 4, app_transaction(now + 5_000)))[0] == 200
        newer = server.json("GET", f"/v1/consent/{APP_TRANSACTION_ID}")[1]
    finally:
        server.stop()
    assert kept["rescinded_at_ms"] == now and kept["notificationUUID"].endswith("000000000002")
    assert newer["rescinded_at_ms"] == now + 5_000 and newer["notificationUUID"].endswith("000000000004")
    assert table(store, "SELECT count(*) FROM consent_rescissions") == [("1",)]


@pytest.mark.parametrize("payload, detail", [
    (None, "names no customer"),
    (lambda now: {k: v for k, v in app_transaction(now).items() if k != "appTransactionId"}, "without the ids"),
    (lambda now: app_transaction(now, bundleId="com.example.other"), "bundle"),
])
def test_a_rescission_that_names_no_customer_of_this_app_is_refused(tmp_path, news_ca, test_ca, mint_jws, now,
                                                                     payload, detail):
    store = tmp_path / "store.db"
    server = store_server(tmp_path, news_ca, test_ca, store=store)
    try:
        status, answer = post(server, rescission(mint_jws, news_ca, now, 5, payload and payload(now)))
    finally:
        server.stop()
    assert status == 400 and detail in answer["detail"], answer
    assert table(store, "SELECT count(*) FROM consent_rescissions") == [("0",)]
    assert table(store, "SELECT count(*) FROM notifications") == [("0",)]


def test_consent_reads_need_the_token_and_a_plausible_id(tmp_path, news_ca, test_ca):
    server = store_server(tmp_path, news_ca, test_ca)
    try:
        assert server.request("GET", f"/v1/consent/{APP_TRANSACTION_ID}", token=None)[0] == 401
        assert server.request("GET", f"/v1/consent/{APP_TRANSACTION_ID}", token="wrong")[0] == 401
        assert server.request("GET", "/v1/consent/")[0] == 400
        assert server.request("GET", "/v1/consent/" + "1" * 65)[0] == 400
        assert server.request("GET", "/v1/consent/1%27%20OR%201=1")[0] == 400
        assert server.request("GET", "/v1/consent/" + "1" * 64)[0] == 200
        assert server.request("POST", f"/v1/consent/{APP_TRANSACTION_ID}", b"{}")[0] == 405
    finally:
        server.stop()


def test_a_store_of_schema_version_2_is_upgraded_in_place(tmp_path, news_ca, test_ca, mint_jws, now):
    """A store written before consent existed (schema 2: no consent table, nor the outbox of
    schema 4, nor the fact columns of schema 5) gains them at start, keeping what it held."""
    store = tmp_path / "store.db"
    server = store_server(tmp_path, news_ca, test_ca, store=store)
    server.stop()
    downgrade_to_schema_4(store)
    with sqlite3.connect(store) as connection:
        for table_name in ("consent_rescissions", "events", "webhook_endpoints", "deliveries", "consumption_answers"):
            connection.execute(f"DROP TABLE {table_name}")
        connection.execute("DELETE FROM schema_version WHERE version > 2")
        connection.execute("INSERT INTO settings (key, value) VALUES ('kept', 'yes')")
    server = store_server(tmp_path, news_ca, test_ca, store=store)
    try:
        assert post(server, rescission(mint_jws, news_ca, now, 6, app_transaction(now)))[0] == 200
        assert server.json("GET", f"/v1/consent/{APP_TRANSACTION_ID}")[1]["consent"] == "rescinded"
    finally:
        server.stop()
    assert table(store, "SELECT max(version) FROM schema_version") == [(SCHEMA_VERSION,)]
    assert table(store, "SELECT event_type FROM events") == [("consent.rescinded",)]
    assert table(store, "SELECT value FROM settings WHERE key = 'kept'") == [("yes",)]


def test_without_a_store_consent_says_so():
    server = Server()
    try:
        status, answer = server.json("GET", f"/v1/consent/{APP_TRANSACTION_ID}")
    finally:
        server.stop()
    assert status == 503 and answer["status"] == "NO_STORE"
