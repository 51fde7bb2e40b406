"""Hardening 5 (issue 56): what a read token may do, what a request can do to the process,
and what an operator's files and flags are held to. Each test here failed on the build
before it (the red team's rows in ../shared/repro/redteam5/ name the same breaks).
"""
import http.client
import json
import os
import subprocess
import time

import pytest

from test_notifications import STORE_POLICY, post
from test_serve import CLI, READ_TOKEN, WRITE_TOKEN, Server
from test_webhooks import (SECRET, Receiver, consumption_request, consumption_server, secret_file,  # noqa: F401 (fixtures)
                           wait_for_state, webhook_server)
from test_notifications import api_mock, mint_jws, new_store, news_ca, now, postgres, story  # noqa: F401 (fixtures)
from test_retention import offer_key, realtime_request, realtime_server  # noqa: F401 (fixture)

METRICS_TOKEN = "test-metrics-token-5a8c03d2"
READ = {"Authorization": f"Bearer {READ_TOKEN}"}
WRITE = {"Authorization": f"Bearer {WRITE_TOKEN}"}


def request(port, method, path, body=None, headers=None, source="127.0.0.1"):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0))
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.read(), response
    finally:
        connection.close()


@pytest.fixture
def store(tmp_path, news_ca, test_ca):
    server = Server("--store", tmp_path / "store.db", "--anchor", news_ca[0] / "root.pem", "--anchor", test_ca / "root.pem",
                    *STORE_POLICY, env={"RECEIPT_METRICS_TOKEN": METRICS_TOKEN})
    yield server
    server.stop()


# ------------------------------------------------------------------- 1. two credentials


def test_a_read_token_never_sends_and_a_write_token_never_reads(store):
    """B1, B4: the read token a support person types into the dashboard cannot send; each kind is its own."""
    for path in ("/v1/consumption/2000000000000001", "/v1/events/replay-failed", f"/v1/events/evt_{'0' * 32}/replay"):
        status, data, _ = request(store.port, "POST", path, "{}", READ)
        assert status == 403 and "write token" in json.loads(data)["detail"], (path, data)
        assert request(store.port, "POST", path, "{}")[0] == 401
    assert request(store.port, "GET", "/v1/subscriptions/2000000000000001", headers=WRITE)[0] == 403
    assert request(store.port, "GET", "/v1/events", headers=READ)[0] == 200
    assert request(store.port, "POST", "/v1/events/replay-failed", headers=WRITE)[0] == 200


@pytest.mark.parametrize("variable, value, says", [
    ("RECEIPT_READ_TOKEN", "tok-a1", "too easily guessed"),
    ("RECEIPT_READ_TOKEN", "q" * 21, "too easily guessed"),
    ("RECEIPT_WRITE_TOKEN", "w-7788", "too easily guessed"),
    ("RECEIPT_WRITE_TOKEN", READ_TOKEN, "two kinds"),
])
def test_short_or_shared_tokens_are_refused_at_start(tmp_path, variable, value, says):
    environment = dict(os.environ, RECEIPT_READ_TOKEN=READ_TOKEN, RECEIPT_WRITE_TOKEN=WRITE_TOKEN)
    environment[variable] = value
    result = subprocess.run([CLI, "serve", "--port", "0", "--store", tmp_path / "s.db", "--bundle-id", "com.example.minted",
                             "--environment", "sandbox"], capture_output=True, text=True, timeout=30, env=environment)
    assert result.returncode == 2 and says in result.stderr, result.stderr
    assert value not in result.stderr


def test_guessing_is_throttled_per_address_and_counted(store):
    """B9: more than 10 wrong tokens in a second from one address: 429 there, with Retry-After;
    the right token still works from another address; /metrics counts both."""
    wrong = {"Authorization": "Bearer " + "w" * 24}
    statuses = [request(store.port, "GET", "/v1/events", headers=wrong, source="127.0.0.2")[0] for _ in range(14)]
    assert statuses[:10] == [401] * 10 and statuses[-1] == 429, statuses
    status, _, response = request(store.port, "GET", "/v1/events", headers=READ, source="127.0.0.2")
    assert status == 429 and int(response.getheader("Retry-After")) >= 1
    assert request(store.port, "GET", "/v1/events", headers=READ, source="127.0.0.3")[0] == 200
    metrics = request(store.port, "GET", "/metrics", headers=READ)[1].decode()
    assert 'receipt_credential_failures_total{outcome="refused"} 11' in metrics, metrics
    assert 'receipt_credential_failures_total{outcome="throttled"}' in metrics


# ------------------------------------------------ 2. consumption answers only for Apple's questions

ANSWER = {"customerConsented": True, "sampleContentProvided": False, "deliveryStatus": "DELIVERED"}


def test_consumption_answers_only_for_a_request_apple_made_and_with_consent(tmp_path, api_mock, news_ca, mint_jws, now,
                                                                           new_store):
    requests = api_mock[3]
    server = consumption_server(api_mock, news_ca, new_store())
    asked, late, never = "7300000000000001", "7300000000000002", "7300000000000003"
    try:
        assert post(server, consumption_request(mint_jws, news_ca, asked, now))[0] == 200
        assert post(server, consumption_request(mint_jws, news_ca, late, now - 13 * 3_600_000))[0] == 200
        wait_for_state(server, asked, "awaiting")
        status, data, _ = server.request("POST", f"/v1/consumption/{never}", json.dumps(ANSWER), headers=WRITE)
        assert status == 404 and json.loads(data)["status"] == "NOT_ASKED", data
        for body in (dict(ANSWER, customerConsented=False), {k: v for k, v in ANSWER.items() if k != "customerConsented"}):
            status, data, _ = server.request("POST", f"/v1/consumption/{asked}", json.dumps(body), headers=WRITE)
            assert status == 400 and "customerConsented" in json.loads(data)["detail"], data
        status, data, _ = server.request("POST", f"/v1/consumption/{late}", json.dumps(ANSWER), headers=WRITE)
        assert status == 410 and json.loads(data)["status"] == "EXPIRED", data
        assert server.request("POST", f"/v1/consumption/{asked}", json.dumps(ANSWER), headers=WRITE)[0] == 202
        wait_for_state(server, asked, "sent")
        status, data, _ = server.request("POST", f"/v1/consumption/{asked}", json.dumps(ANSWER), headers=WRITE)
        assert status == 409 and json.loads(data)["status"] == "ALREADY_ANSWERED"
        sent = [r["path"] for r in requests() if r["method"] == "PUT"]
        assert not any(never in path or late in path for path in sent)
    finally:
        server.stop()


def test_a_policy_without_consent_is_refused_at_start(tmp_path, api_mock, news_ca):
    from test_notifications import api_flags
    policy = {"consentCollected": "terms", "default": dict(ANSWER, customerConsented=False)}
    (tmp_path / "policy.json").write_text(json.dumps(policy))
    result = subprocess.run([CLI, "serve", "--port", "0", "--store", tmp_path / "s.db", *map(str, api_flags(api_mock)),
                             "--consumption-policy", tmp_path / "policy.json"], capture_output=True, text=True, timeout=30,
                            env=dict(os.environ, RECEIPT_READ_TOKEN=READ_TOKEN))
    assert result.returncode == 2 and "customerConsented must be true" in result.stderr, result.stderr


# ---------------------------------------------------------- 3. replay re-sends only what failed


def test_a_delivered_event_is_sent_again_only_when_forced_and_at_most_three_times(tmp_path, news_ca, test_ca, story,
                                                                                 secret_file):
    receiver = Receiver()
    server = webhook_server(tmp_path, news_ca, test_ca, receiver, secret_file)
    try:
        assert post(server, story[0][2])[0] == 200
        event = receiver.wait_for(1)[0]["data"]["event_id"]
        deadline = time.time() + 10
        while server.json("GET", f"/v1/events/{event}")[1]["deliveries"][0]["state"] != "delivered":
            assert time.time() < deadline
            time.sleep(0.05)
        status, data, _ = server.request("POST", f"/v1/events/{event}/replay", headers=WRITE)
        assert status == 409 and json.loads(data)["status"] == "ALREADY_DELIVERED", data
        for _ in range(3):
            status, data, _ = server.request("POST", f"/v1/events/{event}/replay?force=true", headers=WRITE)
            assert status == 200 and json.loads(data) == {"replayed_deliveries": 1}
            time.sleep(0.3)
        status, data, _ = server.request("POST", f"/v1/events/{event}/replay?force=true", headers=WRITE)
        assert status == 409 and json.loads(data)["status"] == "REPLAY_LIMIT"
        assert server.request("POST", f"/v1/events/{event}/replay?force=yes", headers=WRITE)[0] == 400
        # Each path under /v1/events/ takes one method: 405 naming it, whatever the prefix takes.
        for method, path, allowed in (("GET", "/v1/events/replay-failed", "POST"), ("POST", f"/v1/events/{event}", "GET"),
                                      ("GET", f"/v1/events/{event}/replay", "POST")):
            status, _, response = server.request(method, path, headers=WRITE if method == "POST" else None)
            assert (status, response.getheader("Allow")) == (405, allowed), (method, path)
        assert server.request("GET", f"/v1/events/{event}?force=true")[0] == 400  # force: replays only
        # Not an event id: never the replay of every failed event.
        assert server.request("POST", "/v1/events/replay-failed/replay", headers=WRITE)[0] == 400
    finally:
        server.stop()
        receiver.close()
    assert server.process.stderr.read().count("sent again on purpose") == 3


# ------------------------------------------------------------------- 4. no request ends the process

ODD_NUMBERS = ["0", "-1", "-9223372036854775808", "9223372036854775807", "9223372036854775808", "1" + "0" * 30, "1e3",
               " 1", "0x10", ""]
#: Every endpoint's numeric and date parameters.
PARAMETERS = [(f"/v1/stats/{figure}", name) for figure in ("subscriptions", "mrr", "flows", "churn")
              for name in ("at", "from", "to")] + [
    (f"/v1/stats/{figure}", name) for figure in ("revenue", "rates", "cohorts", "active", "mrr_movement")
    for name in ("from", "to")] + [
    ("/v1/stats/cohorts", "periods"),
    ("/dashboard", "at"), ("/dashboard", "from"), ("/dashboard", "to"),
    ("/v1/events", "limit"), ("/v1/events", "before"),
    ("/v1/entitlements?appAccountToken=7e3fb20b-4cdb-47cc-936d-99d65f608138", "limit"),
]


def test_every_numeric_parameter_is_200_or_400_and_the_server_lives(store):
    """B2: Int64.max as an instant killed the server (SIGILL)."""
    from urllib.parse import quote
    for path, name in PARAMETERS:
        for value in ODD_NUMBERS:
            joined = f"{path}{'&' if '?' in path else '?'}{name}={quote(value)}"
            status, data, _ = request(store.port, "GET", joined, headers=READ)
            assert status in (200, 400), (joined, status, data)
            if status == 400 and path.startswith("/v1/stats"):
                assert name in json.loads(data)["detail"], data
            assert store.process.poll() is None, joined
    assert request(store.port, "GET", "/healthz")[0] == 200


@pytest.mark.parametrize("path", ["/v1/stats/mrr?at=2026-01-01&at=2026-02-01", "/v1/stats/mrr?bogus=1",
                                  "/v1/subscriptions/2000000000000001?x=1", "/v1/events?limit=1&limit=2",
                                  "/dashboard/customer?id=1&id=2", "/healthz?verbose=1", "/metrics?x=1"])
def test_unknown_and_repeated_query_parameters_are_refused(store, path):
    status, data, _ = request(store.port, "GET", path, headers=READ)
    assert status == 400, (path, data)


# ------------------------------------------------------------------------- 10. headers


def test_every_answer_says_nosniff_and_customer_data_is_never_cached(store):
    for path, headers in (("/healthz", {}), ("/v1/events", READ), ("/v1/stats/subscriptions", READ),
                          ("/v1/subscriptions/2000000000000001", READ), ("/nowhere", {}), ("/dashboard", READ)):
        status, _, response = request(store.port, "GET", path, headers=headers)
        assert response.getheader("X-Content-Type-Options") == "nosniff", path
        if path.startswith(("/v1", "/dashboard")):
            assert response.getheader("Cache-Control") == "no-store", path
    assert request(store.port, "GET", "/dashboard", headers=READ)[2].getheader("Referrer-Policy") == "no-referrer"


# ----------------------------------------------------------------------- 11. /metrics


def test_metrics_take_a_read_or_metrics_token_and_health_stays_open(store):
    """B5: counts by notification type tell anyone how the business goes."""
    assert request(store.port, "GET", "/metrics")[0] == 401
    metrics = {"Authorization": f"Bearer {METRICS_TOKEN}"}
    assert request(store.port, "GET", "/metrics", headers=metrics)[0] == 200
    assert request(store.port, "GET", "/metrics", headers=READ)[0] == 200
    assert request(store.port, "GET", "/v1/events", headers=metrics)[0] == 403
    assert request(store.port, "GET", "/healthz")[0] == 200 and request(store.port, "GET", "/readyz")[0] == 200


# ------------------------------------------------------------------- 12. operator input


def test_a_secret_file_others_can_read_is_refused_naming_the_fix(tmp_path):
    tokens = tmp_path / "tokens"
    tokens.write_text("a-read-token-of-enough-length\n")
    tokens.chmod(0o644)
    result = subprocess.run([CLI, "serve", "--port", "0", "--store", tmp_path / "s.db", "--bundle-id", "com.example.minted",
                             "--environment", "sandbox", "--read-token-file", tokens], capture_output=True, text=True,
                            timeout=30, env=dict(os.environ, RECEIPT_READ_TOKEN=""))
    assert result.returncode == 2 and f"chmod 600 {tokens}" in result.stderr, result.stderr
    assert "a-read-token-of-enough-length" not in result.stderr


@pytest.mark.parametrize("flags, says", [
    (["--webhook", "https://hooks.example.com:99999/in"], "port is 1 to 65535"),
    (["--webhook", "https://hooks.example.com:0/in"], "port is 1 to 65535"),
    (["--webhook", "https://hooks.example.com/in?token=receiver-secret-x"], "no query"),
    (["--environment", "production"], "--environment is given twice"),
    (["--check-config", "--bundle-id", "com.example.other", "--environment", "production"], "--environment is given twice"),
])
def test_operator_input_is_held_to_what_it_means(tmp_path, flags, says):
    secret = tmp_path / "webhook.secret"
    secret.write_text(SECRET + "\n")
    secret.chmod(0o600)
    if flags[0] == "--webhook":
        flags = flags + ["--webhook-secret-file", str(secret)]
    result = subprocess.run([CLI, "serve", "--port", "0", "--store", tmp_path / "s.db", "--bundle-id", "com.example.minted",
                             "--environment", "sandbox", *flags], capture_output=True, text=True, timeout=30,
                            env=dict(os.environ, RECEIPT_READ_TOKEN=READ_TOKEN))
    assert result.returncode == 2 and says in result.stderr, result.stderr
    assert "receiver-secret-x" not in result.stderr


@pytest.mark.parametrize("url", ["postgres:/receipt:hunter2-secret@127.0.0.1/db", "Postgres://receipt:hunter2-secret@127.0.0.1/db",
                                 "postgres://receipt:hunter2-secret-127.0.0.1/db"])
def test_a_mistyped_postgresql_url_never_shows_its_password(tmp_path, url):
    result = subprocess.run([CLI, "serve", "--port", "0", "--store", url, "--bundle-id", "com.example.minted",
                             "--environment", "sandbox"], capture_output=True, text=True, timeout=30,
                            env=dict(os.environ, RECEIPT_READ_TOKEN=READ_TOKEN))
    assert result.returncode == 2 and "hunter2" not in result.stderr, result.stderr


# ------------------------------------------------------- 8. the store knows its app and environment


def start_refusal(*flags):
    result = subprocess.run([CLI, "serve", "--port", "0", *map(str, flags)], capture_output=True, text=True, timeout=30,
                            env=dict(os.environ, RECEIPT_READ_TOKEN=READ_TOKEN))
    return result.returncode, result.stderr


def test_a_store_answers_only_for_the_app_and_environment_it_holds(tmp_path, news_ca, test_ca, story):
    """A production server on a store a sandbox server writes answered `entitled: true` for a
    Sandbox purchase: now it is refused at start, naming both, whether the store was claimed by a
    server of this version or holds rows from before."""
    import sqlite3
    location = tmp_path / "shared.db"
    server = Server("--store", location, "--anchor", news_ca[0] / "root.pem", *STORE_POLICY)
    try:
        assert post(server, story[0][2])[0] == 200
    finally:
        server.stop()
    production = ("--store", location, "--anchor", news_ca[0] / "root.pem", "--bundle-id", STORE_POLICY[1],
                  "--environment", "production", "--app-apple-id", "1234567890")
    code, stderr = start_refusal(*production)
    assert code == 2 and "Sandbox for com.example.minted" in stderr and "Production for com.example.minted" in stderr, stderr
    other_app = ("--store", location, "--anchor", news_ca[0] / "root.pem", "--bundle-id", "com.example.other",
                 "--environment", "sandbox")
    assert start_refusal(*other_app)[0] == 2
    # A store from before the claim (its rows say Sandbox): the rows are read.
    with sqlite3.connect(location) as database:
        database.execute("DELETE FROM settings WHERE key = 'store_identity'")
    code, stderr = start_refusal(*production)
    assert code == 2 and "the environment Sandbox" in stderr, stderr
    code, stderr = start_refusal(*other_app)
    assert code == 2 and "the app com.example.minted" in stderr, stderr
    # The same app and environment again: served.
    server = Server("--store", location, "--anchor", news_ca[0] / "root.pem", *STORE_POLICY)
    try:
        assert server.request("GET", "/v1/subscriptions/2000000000000001")[0] == 200
    finally:
        assert server.stop() == 0


# --------------------------------------------- 9. every notification that is news makes an event


def test_a_notification_whose_rows_change_nothing_still_makes_its_event(tmp_path, news_ca, test_ca, mint_jws, now,
                                                                        secret_file):
    """A CONSUMPTION_REQUEST for a purchase already stored changed no row, so the app never
    learnt it had 12 hours to answer; the same for REFUND_DECLINED. A duplicate still makes none."""
    receiver = Receiver()
    server = webhook_server(tmp_path, news_ca, test_ca, receiver, secret_file)
    transaction = {"transactionId": "7400000000000001", "originalTransactionId": "7400000000000001",
                   "bundleId": STORE_POLICY[1], "productId": "com.example.coins", "purchaseDate": now - 86_400_000,
                   "originalPurchaseDate": now - 86_400_000, "quantity": 1, "type": "Consumable",
                   "inAppOwnershipType": "PURCHASED", "signedDate": now - 3_600_000, "environment": "Sandbox",
                   "transactionReason": "PURCHASE", "storefront": "USA", "storefrontId": "143441"}

    def notification(kind, uuid):
        return mint_jws.sign_notification({
            "notificationType": kind, "notificationUUID": uuid, "version": "2.0", "signedDate": now,
            "data": {"bundleId": STORE_POLICY[1], "environment": "Sandbox", "signedTransactionInfo": transaction}},
            news_ca[1])
    try:
        first = notification("ONE_TIME_CHARGE", "d0d0a000-0000-4000-8000-000000000001")
        asked = notification("CONSUMPTION_REQUEST", "d0d0a000-0000-4000-8000-000000000002")
        declined = notification("REFUND_DECLINED", "d0d0a000-0000-4000-8000-000000000003")
        for body in (first, asked, declined, asked):
            assert post(server, body)[0] == 200
        delivered = receiver.wait_for(3)
        time.sleep(0.5)
        assert [event["data"]["notification_type"] for event in receiver.delivered()] == \
            ["ONE_TIME_CHARGE", "CONSUMPTION_REQUEST", "REFUND_DECLINED"]
        assert delivered[1]["data"]["answer_path"] == "/v1/consumption/7400000000000001"
        # A consumable has no subscription status (it is no "expired" subscription), and its
        # events carry none; an id escaped by a client's URL library is the same id.
        assert all(event["data"]["state"] is None for event in delivered)
        for path in ("/v1/subscriptions/7400000000000001", "/v1/subscriptions/%374%30%30000000000001"):
            status, data, _ = server.request("GET", path)
            assert status == 404 and "type Consumable, not an auto-renewable subscription" in json.loads(data)["detail"]
    finally:
        server.stop()
        receiver.close()


# ------------------------------------------------ 7. every signature path asks revocation alike


MESSAGE_RULES = {"default": {"message": {"messageIdentifier": "00000000-0000-0000-0000-000000000001"}}}
OFFER_RULES = {"default": {"promotionalOffer": {"messageIdentifier": "00000000-0000-0000-0000-000000000003",
                                                "offerIdentifier": "win-back-50"}}}


def test_the_realtime_endpoint_asks_ocsp_as_verify_does(tmp_path, offer_key):
    """B6: with --revocation hard every valid realtime request was refused (REVOCATION_UNKNOWN)."""
    from test_revocation import CA
    import pathlib
    import mint_jws as minter
    ca = CA(tmp_path / "ca")
    ca.start_responders()
    trust = (pathlib.Path(ca.directory), minter.load_ca(ca.directory))
    server = realtime_server(tmp_path, trust, offer_key, MESSAGE_RULES, "sandbox", "--revocation", "hard", "--ocsp-timeout", "2")
    try:
        status, data, _ = server.request("POST", "/retention/realtime", realtime_request(minter, trust))
        metrics = server.request("GET", "/metrics")[1].decode()
    finally:
        server.stop()
        ca.stop_responders()
    assert status == 200 and "message" in json.loads(data), data
    assert 'outcome="good",reason="realtime"' in metrics


def test_in_soft_mode_a_realtime_request_is_answered_at_once_and_ocsp_asked_for_the_next(tmp_path, offer_key):
    """With --revocation soft the realtime endpoint never asked OCSP (/v1/verify did): a revoked
    certificate was never learnt of there. It answers at once and asks beside the answer."""
    from test_revocation import CA
    import pathlib
    import mint_jws as minter
    ca = CA(tmp_path / "ca")
    ca.start_responders()
    trust = (pathlib.Path(ca.directory), minter.load_ca(ca.directory))
    server = realtime_server(tmp_path, trust, offer_key, MESSAGE_RULES, "sandbox", "--revocation", "soft", "--ocsp-timeout", "2")
    try:
        status, data, _ = server.request("POST", "/retention/realtime", realtime_request(minter, trust))
        assert status == 200 and "message" in json.loads(data), data
        deadline = time.time() + 10
        while 'outcome="good",reason="realtime"' not in (metrics := server.request("GET", "/metrics")[1].decode()):
            assert time.time() < deadline, metrics
            time.sleep(0.1)
    finally:
        server.stop()
        ca.stop_responders()


def test_a_realtime_request_whose_revocation_is_unknown_may_be_sent_again(tmp_path, offer_key):
    """The realtime endpoint, in hard mode with no OCSP responder answering, refused a valid request
    as bad (400); it can succeed later, so it is 503 (as a notification is)."""
    import mint_jws as minter
    minter.create_ca(str(tmp_path / "ca"), ("http://127.0.0.1:9/leaf", "http://127.0.0.1:9/intermediate"))
    trust = (tmp_path / "ca", minter.load_ca(str(tmp_path / "ca")))
    server = realtime_server(tmp_path, trust, offer_key, MESSAGE_RULES, "sandbox", "--revocation", "hard", "--ocsp-timeout", "1")
    try:
        status, data, _ = server.request("POST", "/retention/realtime", realtime_request(minter, trust))
    finally:
        server.stop()
    assert status == 503 and b"REVOCATION_UNKNOWN" in data, (status, data)


def test_a_realtime_request_is_answered_only_fresh_and_once_per_identifier(tmp_path, news_ca, mint_jws, offer_key):
    """B10: a request signed a year ago got a fresh answer; one identifier got a new answer each time."""
    server = realtime_server(tmp_path, news_ca, offer_key, OFFER_RULES)
    year = 365 * 86_400_000
    try:
        for skew in (-year, year, -6 * 60_000, 6 * 60_000):
            body = realtime_request(mint_jws, news_ca, signedDate=int(time.time() * 1000) + skew)
            status, data, _ = server.request("POST", "/retention/realtime", body)
            assert status == 400 and "signedDate" in json.loads(data)["detail"], (skew, data)
        body = realtime_request(mint_jws, news_ca, signedDate=int(time.time() * 1000) - 60_000)
        answers = {server.request("POST", "/retention/realtime", body)[1] for _ in range(3)}
        assert len(answers) == 1 and b"promotionalOfferSignatureV2" in next(iter(answers)), answers
        # Another identifier: another signature (a nonce of its own).
        other = realtime_request(mint_jws, news_ca)
        assert server.request("POST", "/retention/realtime", other)[1] not in answers
    finally:
        server.stop()


# --------------------------------------------------- 5. one receiver never stalls another


def two_receiver_server(tmp_path, news_ca, test_ca, first, second):
    flags = []
    for name, receiver in (("a", first), ("b", second)):
        secret = tmp_path / f"{name}.secret"
        secret.write_text(SECRET + "\n")
        secret.chmod(0o600)
        flags += ["--webhook", receiver.url if isinstance(receiver, Receiver) else receiver, "--webhook-secret-file", secret]
    return Server("--store", tmp_path / "store.db", "--anchor", news_ca[0] / "root.pem", "--anchor", test_ca / "root.pem",
                  *STORE_POLICY, "--webhook-initial-backoff-ms", "200", "--webhook-timeout", "10", *flags)


def notifications(mint_jws, news_ca, now, count, first=3500000000000001):
    bodies = []
    for index in range(count):
        story = mint_jws.notification_story(str(first + index * 1000), "7e3fb20b-4cdb-47cc-936d-99d65f608138", now=now)
        bodies.append(mint_jws.sign_notification(story[0][1], news_ca[1]))
    return bodies


def test_a_hanging_receiver_never_holds_up_another(tmp_path, news_ca, test_ca, mint_jws, now):
    """B3: one hanging endpoint took another's median latency from 0.01 s to 17.7 s."""
    hanging, healthy = Receiver(lambda count: "hang"), Receiver()
    server = two_receiver_server(tmp_path, news_ca, test_ca, hanging, healthy)
    bodies = notifications(mint_jws, news_ca, now, 40)
    try:
        for body in bodies:
            assert post(server, body)[0] == 200
            time.sleep(0.05)
        delivered = healthy.wait_for(len(bodies), timeout=30)
        with healthy.lock:
            latencies = sorted(request["arrived"] - json.loads(request["body"])["data"]["created_at_ms"] / 1000
                               for request in healthy.requests)
        assert len(delivered) == len(bodies)
        assert latencies[int(len(latencies) * 0.99) - 1] < 1.0, latencies
    finally:
        server.stop()
        hanging.close()
        healthy.close()


def test_a_refusing_receiver_never_slows_another(tmp_path, news_ca, test_ca, mint_jws, now):
    """B3: with one endpoint refusing connections, the other drained 47 of 10,000 deliveries in 81 s.
    Timed from the first notification posted to the last event taken, B beside a receiver that never
    accepts against B beside a healthy one; a second pair of runs where the first falls short (a
    shared machine's noise), and the better ratio counts."""
    import socket
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    closed.listen(0)  # never accepted: once its queue is full, connections are neither taken nor refused
    refusing = f"http://127.0.0.1:{closed.getsockname()[1]}/hooks"
    ratios = []

    def drain_rate(label, other, first):
        healthy = Receiver()
        directory = tmp_path / label
        directory.mkdir()
        server = two_receiver_server(directory, news_ca, test_ca, other, healthy)
        bodies = notifications(mint_jws, news_ca, now, 150, first=first)
        try:
            start = time.time()
            for body in bodies:
                assert post(server, body)[0] == 200
            healthy.wait_for(len(bodies), timeout=60)
            return len(bodies) / (time.time() - start)
        finally:
            server.stop()
            healthy.close()
            if isinstance(other, Receiver):
                other.close()

    try:
        for attempt in range(2):
            alone = drain_rate(f"alone-{attempt}", Receiver(), 3600000000000001 + attempt * 2_000_000)
            beside = drain_rate(f"beside-{attempt}", refusing, 3601000000000001 + attempt * 2_000_000)
            ratios.append(beside / alone)
            if ratios[-1] >= 0.8:
                break
    finally:
        closed.close()
    assert max(ratios) >= 0.8, ratios


def test_a_2xx_with_a_large_body_is_one_delivery(tmp_path, news_ca, test_ca, story, secret_file):
    """B7: a 100 KB "thanks" page was a failure, and the event was sent again and again."""
    talkative = Receiver(lambda count: (200, b"<html>" + b"thanks " * 15_000 + b"</html>"))
    server = webhook_server(tmp_path, news_ca, test_ca, talkative, secret_file)
    try:
        assert post(server, story[0][2])[0] == 200
        talkative.wait_for(1)
        time.sleep(2)
        with talkative.lock:
            assert len(talkative.requests) == 1
        event = talkative.delivered()[0]["data"]["event_id"]
        assert server.json("GET", f"/v1/events/{event}")[1]["deliveries"][0]["state"] == "delivered"
    finally:
        server.stop()
        talkative.close()


# ---------------------------------------------------------------- 6. events of bounded size


def test_an_event_is_small_whatever_the_accounts_history(tmp_path, news_ca, test_ca, mint_jws, now, secret_file):
    """B8: every event embedded the account's latest 100 transactions (~90 KB)."""
    receiver = Receiver()
    server = webhook_server(tmp_path, news_ca, test_ca, receiver, secret_file)
    bodies = notifications(mint_jws, news_ca, now, 120, first=3700000000000001)  # one account token, 120 subscriptions
    try:
        for body in bodies:
            assert post(server, body)[0] == 200
        events = receiver.wait_for(len(bodies), timeout=60)
        last = events[-1]
        beyond_notification = len(json.dumps(last)) - len(last["data"]["signed_payload"])
        assert beyond_notification <= 8 * 1024, beyond_notification
        assert last["data"]["entitlements_of"] == "app_account_token"
        assert "active_product_ids" in last["data"]["entitlements"] and "purchases" not in last["data"]["entitlements"]
    finally:
        server.stop()
        receiver.close()


def test_an_events_state_is_decided_by_its_deciding_period_however_old(tmp_path, news_ca, test_ca, mint_jws, now,
                                                                      secret_file):
    """An event's state reads the subscription's latest 20 transactions and the two its summary
    stands on: a period bought before 25 later ones and ending after them still decides it."""
    receiver = Receiver()
    server = webhook_server(tmp_path, news_ca, test_ca, receiver, secret_file)
    day = 86_400_000
    original = "7500000000000001"
    template = mint_jws.notification_story(original, now=now)
    bodies = []
    for index in range(26):
        payload = json.loads(json.dumps(template[0 if index == 0 else 1][1]))
        payload["notificationUUID"] = f"75757575-0000-4000-8000-{index:012d}"
        payload["signedDate"] = now - (30 - index) * day
        transaction = payload["data"]["signedTransactionInfo"]
        purchased = now - (60 - index) * day
        # The first period runs a year past now; each later one ran a day, long ago.
        transaction.update(transactionId=str(int(original) + 1 + index), webOrderLineItemId=str(int(original) + 100 + index),
                           purchaseDate=purchased, expiresDate=now + 365 * day if index == 0 else purchased + day,
                           signedDate=payload["signedDate"])
        payload["data"]["signedRenewalInfo"]["signedDate"] = payload["signedDate"]
        bodies.append(mint_jws.sign_notification(payload, news_ca[1]))
    try:
        for body in bodies:
            assert post(server, body)[0] == 200
        last = receiver.wait_for(len(bodies), timeout=60)[-1]["data"]["state"]
        status, whole = server.json("GET", f"/v1/subscriptions/{original}")
        assert status == 200 and whole["status_name"] == "active" and whole["transaction_count"] == 26, whole
        assert last["status_name"] == "active", last["status_name"]
        assert last["transaction_info"]["transactionId"] == str(int(original) + 1), last["transaction_info"]
        assert last["transaction_count"] == 21  # the latest 20, and the deciding period
    finally:
        server.stop()
        receiver.close()
