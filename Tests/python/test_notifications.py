"""`receipt serve --store`: App Store Server Notifications V2 in, current state out,
with each store: an SQLite file, and PostgreSQL in a throwaway cluster (postgres_cluster).

Notifications are minted by tools/mint_jws.py (notification_story): one monthly
subscription bought 95 days ago, renewed twice, its first renewal refunded, its
renewal switched off and on, and its last renewal failed into a grace period that
lasts past now. They are posted as Apple posts them, in order, shuffled, twice,
tampered with, and with the server killed in the middle.
"""
import base64
import datetime
import itertools
import json
import os
import pathlib
import random
import re
import select
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import postgres_cluster
from conftest import JWS_MINTER_DIR, MOCK_API_IDS, api_mock_running, run_minter
from store_tables import SCHEMA_VERSION, downgrade_to_schema_5, table  # noqa: F401 (table: the tests of other files import it from here)
from test_serve import CLI, READ_TOKEN, Server

ORIGINAL = "2000000000000001"
TOKEN = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
DAY = 86_400_000


@pytest.fixture(scope="module")
def mint_jws():
    import sys
    sys.path.insert(0, str(JWS_MINTER_DIR))
    import mint_jws
    return mint_jws


@pytest.fixture(scope="module")
def news_ca(tmp_path_factory, mint_jws):
    directory = tmp_path_factory.mktemp("news-ca")
    mint_jws.create_ca(str(directory))
    return directory, mint_jws.load_ca(str(directory))


@pytest.fixture(scope="module")
def now():
    return int(time.time()) * 1000  # whole seconds, as a receipt writes dates


@pytest.fixture(scope="module")
def story(mint_jws, news_ca, now):
    """[(name, payload, body)] in the order things happened."""
    _, chains = news_ca
    return [(name, payload, mint_jws.sign_notification(payload, chains))
            for name, payload in mint_jws.notification_story(ORIGINAL, TOKEN, now=now)]


@pytest.fixture(scope="module")
def postgres():
    """A cluster for the module: its URL. CI installs PostgreSQL; elsewhere, skipped by name when absent."""
    if postgres_cluster.server_binaries() is None:
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL's server is not installed: scripts/install-deps.sh test installs it")
        pytest.skip("PostgreSQL's server is not installed (scripts/install-deps.sh test): PostgreSQL store tests skipped")
    with postgres_cluster.cluster() as url:
        yield url


DATABASES = itertools.count()


@pytest.fixture(params=["sqlite", "postgres"])
def new_store(request, tmp_path):
    """new_store() -> the location of a new, empty store of the parameter's kind."""
    def make():
        if request.param == "sqlite":
            return tmp_path / f"store-{next(DATABASES)}.db"
        base = request.getfixturevalue("postgres")
        name = f"t{next(DATABASES)}"
        subprocess.run(["psql", base, "-q", "-c", f"CREATE DATABASE {name}"], check=True)
        return base.rsplit("/", 1)[0] + "/" + name
    return make


READ_TOKEN_ENVIRONMENT = dict(os.environ, RECEIPT_READ_TOKEN=READ_TOKEN)
#: What a store takes: its app's notifications, of one environment (the minted ones are Sandbox).
STORE_POLICY = ("--bundle-id", "com.example.minted", "--environment", "sandbox")


def store_server(tmp_path, news_ca, test_ca, *flags, store=None):
    return Server("--store", store or tmp_path / "store.db", "--anchor", news_ca[0] / "root.pem",
                  "--anchor", test_ca / "root.pem", *STORE_POLICY, *flags)


def post(server, body, path="/notifications/v2"):
    status, data, _ = server.request("POST", path, body, headers={"Content-Type": "application/json"})
    return status, json.loads(data)


def state_of(server, original=ORIGINAL):
    status, answer = server.json("GET", f"/v1/subscriptions/{original}")
    assert status == 200, answer
    # at_ms is the instant asked; everything else must not depend on delivery order.
    return {key: value for key, value in answer.items() if key != "at_ms"}


def count(location, name):
    return int(table(location, f"SELECT count(*) FROM {name}")[0][0])


def test_in_order_gives_apples_status_and_pending_renewal(tmp_path, news_ca, test_ca, story, now, new_store):
    server = store_server(tmp_path, news_ca, test_ca, store=new_store())
    try:
        for name, payload, body in story:
            status, answer = post(server, body)
            assert (status, answer) == (200, {"notificationUUID": payload["notificationUUID"], "stored": True}), name
        state = state_of(server)
    finally:
        assert server.stop() == 0
    # The last period ended 5 days ago; the grace period lasts 11 more days: Apple's status 4.
    assert (state["status"], state["status_name"], state["entitled"]) == (4, "grace_period", True)
    assert state["transaction_count"] == 3
    assert state["transaction_info"]["transactionId"] == "200000000000000102"
    assert state["renewal_info"]["isInBillingRetryPeriod"] is True
    pending = state["pending_renewal_info"][0]
    assert pending["auto_renew_status"] == "1"  # switched off, then on again: the later news won
    assert (pending["expiration_intent"], pending["is_in_billing_retry_period"]) == ("2", "1")
    grace = story[-1][1]["data"]["signedRenewalInfo"]["gracePeriodExpiresDate"]
    assert pending["grace_period_expires_date_ms"] == str(grace)
    # The signed members are handed back whole; their payloads beside them are what was signed.
    assert json.loads(base64.urlsafe_b64decode(state["signedTransactionInfo"].split(".")[1] + "==")) == state["transaction_info"]


def test_shuffled_and_repeated_delivery_converges(tmp_path, news_ca, test_ca, story, new_store):
    ordered = store_server(tmp_path, news_ca, test_ca, store=new_store())
    try:
        for _, _, body in story:
            assert post(ordered, body)[0] == 200
        expected = state_of(ordered)
    finally:
        ordered.stop()
    for seed in range(4):
        deliveries = [body for _, _, body in story] * 2
        random.Random(seed).shuffle(deliveries)
        path = new_store()
        server = store_server(tmp_path, news_ca, test_ca, store=path)
        try:
            stored = [post(server, body)[1]["stored"] for body in deliveries]
            assert stored.count(True) == len(story) and stored.count(False) == len(story), seed
            assert state_of(server) == expected, seed
        finally:
            server.stop()
        assert count(path, "notifications") == len(story)
        assert count(path, "transactions") == 3


def test_a_duplicate_changes_nothing(tmp_path, news_ca, test_ca, story, new_store):
    path = new_store()
    server = store_server(tmp_path, news_ca, test_ca, store=path)
    try:
        for _, _, body in story:
            post(server, body)
        before = table(path, "SELECT * FROM transactions ORDER BY 1") + table(path, "SELECT * FROM renewal_infos")
        # The first notification again: older news than all the store holds.
        status, answer = post(server, story[0][2])
        assert (status, answer["stored"]) == (200, False)
        after = table(path, "SELECT * FROM transactions ORDER BY 1") + table(path, "SELECT * FROM renewal_infos")
        assert after == before
    finally:
        server.stop()


def test_an_app_account_token_that_is_no_uuid_is_stored_but_never_a_key(tmp_path, news_ca, test_ca, mint_jws, now,
                                                                         new_store):
    """Apple's model makes appAccountToken a UUID. A signed one of 9,000 characters is kept in its
    JWS but not as a lookup key: as one it exceeded PostgreSQL's B-tree limit (about 2.7 kB), and
    the write failed with a 503 that Apple would retry for ever (red team 4)."""
    _, chains = news_ca
    original, huge = "2000000000000501", "ab" * 4500
    location = new_store()
    server = store_server(tmp_path, news_ca, test_ca, store=location)
    try:
        for _, payload in mint_jws.notification_story(original, huge, now=now):
            status, answer = post(server, mint_jws.sign_notification(payload, chains))
            assert status == 200, answer
        assert state_of(server, original)["status"] == 4  # in its grace period, as the story ends
    finally:
        server.stop()
    assert table(location, f"SELECT count(*), count(app_account_token) FROM transactions "
                           f"WHERE original_transaction_id = '{original}'") == [("3", "0")]


def test_a_value_the_store_can_never_hold_is_refused_not_deferred(tmp_path, news_ca, test_ca, mint_jws, new_store):
    """A transaction id of 9,000 random digits exceeds what a PostgreSQL index entry holds, and
    PostgreSQL keeps no NUL in text: a 503 would have Apple send it again for days, so the
    answer is 400 (SQLite holds both). The store is left as it was."""
    _, chains = news_ca
    location = new_store()
    is_postgres = str(location).startswith("postgres")
    rng = random.Random(29)
    bodies = []
    for original, member, value in (("2000000000000601", "transactionId", "".join(rng.choice("0123456789") for _ in range(9000))),
                                    ("2000000000000701", "productId", "com.example.\u0000nul")):
        _, payload = mint_jws.notification_story(original)[0]
        payload["data"]["signedTransactionInfo"][member] = value
        bodies.append(mint_jws.sign_notification(payload, chains))
    server = store_server(tmp_path, news_ca, test_ca, store=location)
    try:
        for body in bodies:
            for _ in range(2):  # the same answer again: nothing was half written
                status, answer = post(server, body)
                if is_postgres:
                    assert (status, answer["status"]) == (400, "STORE_REFUSED"), answer
                else:
                    assert status == 200, answer
        assert (post(server, mint_jws.sign_notification(mint_jws.notification_story("2000000000000801")[0][1], chains))[0]
                == 200)  # the store still takes the rest
    finally:
        server.stop()
    if is_postgres:
        assert "refused (400): the store cannot hold it" in server.process.stderr.read()
        assert table(location, "SELECT count(*) FROM transactions") == [("1",)]


def test_a_refused_notification_among_others_arriving_together_fails_alone(tmp_path, news_ca, test_ca, mint_jws, new_store):
    """Notifications posted together share a transaction (GroupCommit), each in a savepoint: one
    PostgreSQL can never hold is answered 400 and rolled back alone, and the others posted with
    it are stored and answered 200."""
    _, chains = news_ca
    location = new_store()
    is_postgres = str(location).startswith("postgres")
    bad, good = [], []
    for index in range(4):
        _, payload = mint_jws.notification_story(str(2000000000001001 + index * 1000))[0]
        payload["data"]["signedTransactionInfo"]["productId"] = "com.example.\u0000nul"
        bad.append(mint_jws.sign_notification(payload, chains))
    for index in range(28):
        _, payload = mint_jws.notification_story(str(2000000000101001 + index * 1000))[0]
        good.append(mint_jws.sign_notification(payload, chains))
    server = store_server(tmp_path, news_ca, test_ca, store=location)
    answers = {}
    try:
        with ThreadPoolExecutor(8) as pool:
            for body, (status, answer) in zip(bad + good, pool.map(lambda body: post(server, body), bad + good)):
                answers[body] = (status, answer.get("status"))
    finally:
        server.stop()
    for body in bad:
        assert answers[body] == ((400, "STORE_REFUSED") if is_postgres else (200, None)), answers[body]
    assert all(answers[body][0] == 200 for body in good), [answers[body] for body in good]
    assert table(location, "SELECT count(*) FROM transactions") == [(str(len(good) + (0 if is_postgres else len(bad))),)]


def test_older_news_under_a_new_uuid_does_not_overwrite(tmp_path, news_ca, test_ca, story, new_store):
    """A notification Apple signed earlier, delivered last under its own UUID, stores its
    notification row but leaves the newer transaction and renewal info in place."""
    server = store_server(tmp_path, news_ca, test_ca, store=new_store())
    try:
        for _, _, body in story[2:]:
            post(server, body)
        latest = state_of(server)
        for _, _, body in story[:2]:
            assert post(server, body)[1]["stored"] is True
        assert state_of(server)["renewal_info"] == latest["renewal_info"]
        assert state_of(server)["transaction_info"] == latest["transaction_info"]
    finally:
        server.stop()


@pytest.mark.parametrize("variant", ["payload-changed", "other-root", "alg-none"])
def test_a_tampered_notification_gets_non_2xx_and_changes_nothing(tmp_path, news_ca, test_ca, story, mint_jws, variant,
                                                                   new_store):
    path = new_store()
    server = store_server(tmp_path, news_ca, test_ca, store=path)
    try:
        post(server, story[0][2])
        _, payload, _ = story[1]
        status, answer = post(server, mint_jws.sign_notification(payload, news_ca[1], variant))
        assert status == 400 and answer["status"].startswith("RECEIPT_E_"), answer
        assert count(path, "notifications") == count(path, "transactions") == 1
        # A metric says so, by outcome.
        _, metrics, _ = server.request("GET", "/metrics")
        assert re.search(rb'receipt_notifications_total\{[^}]*outcome="refused"[^}]*\} 1', metrics), metrics
    finally:
        server.stop()


def test_a_nested_member_tampered_names_it(tmp_path, news_ca, test_ca, story, mint_jws):
    _, payload, _ = story[1]
    data = dict(payload["data"])
    data["signedTransactionInfo"] = mint_jws.sign(data["signedTransactionInfo"], news_ca[1], "payload-changed")
    body = mint_jws.sign_notification(dict(payload, data=data), news_ca[1])
    path = tmp_path / "store.db"
    server = store_server(tmp_path, news_ca, test_ca, store=path)
    try:
        status, answer = post(server, body)
    finally:
        server.stop()
    assert status == 400
    assert "data.signedTransactionInfo" in answer["detail"], answer
    assert count(path, "transactions") == 0


@pytest.mark.parametrize("body", [b"", b"{}", b"[]", b'{"signedPayload": 1}', b'{"signedPayload": "a.b.c"}',
                                  b'{"signedPayload": "' + b"A" * 70000 + b'"}', b"{" * 100])
def test_garbage_bodies_are_refused_by_name(tmp_path, news_ca, test_ca, body):
    server = store_server(tmp_path, news_ca, test_ca, "--max-body", 65536)
    try:
        status, data, _ = server.request("POST", "/notifications/v2", body)
        assert status in (400, 413), (status, data)
        assert json.loads(data)["status"].startswith("RECEIPT_E_")
        assert server.request("GET", "/healthz")[0] == 200
    finally:
        server.stop()


def test_a_bare_jws_or_a_json_string_posted_as_the_body_is_named(tmp_path, news_ca, test_ca, story):
    token = json.loads(story[0][2])["signedPayload"]
    server = store_server(tmp_path, news_ca, test_ca)
    try:
        bare = post(server, token.encode())
        quoted = post(server, json.dumps(token).encode())
    finally:
        server.stop()
    assert bare[0] == 400 and "the body is a bare JWS; Apple posts {\"signedPayload\"" in bare[1]["detail"], bare
    assert quoted[0] == 400 and "the body is a JSON string; Apple posts" in quoted[1]["detail"], quoted


def test_only_post_on_the_notifications_path_and_a_configurable_path(tmp_path, news_ca, test_ca, story):
    server = store_server(tmp_path, news_ca, test_ca, "--notifications-path", "/apple/hooks")
    try:
        assert server.request("GET", "/apple/hooks")[0] == 405
        assert server.request("POST", "/notifications/v2", story[0][2])[0] == 404
        assert post(server, story[0][2], "/apple/hooks")[0] == 200
    finally:
        server.stop()


def test_notifications_path_cannot_shadow_an_endpoint():
    result = subprocess.run([CLI, "serve", "--store", "/tmp/x.db", "--notifications-path", "/verifyReceipt"],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2 and "--notifications-path" in result.stderr


def test_without_a_store_the_endpoints_say_so(tmp_path, story):
    server = Server()
    try:
        for method, path, body in [("POST", "/notifications/v2", story[0][2]), ("GET", f"/v1/subscriptions/{ORIGINAL}", None),
                                   ("GET", f"/v1/entitlements?appAccountToken={TOKEN}", None)]:
            status, data, _ = server.request(method, path, body)
            assert status == 503 and json.loads(data)["status"] == "NO_STORE" and b"--store" in data, (path, data)
    finally:
        server.stop()


def test_a_store_that_cannot_be_opened_is_a_usage_error(tmp_path):
    result = subprocess.run([CLI, "serve", "--store", str(tmp_path / "missing-dir" / "store.db"), *STORE_POLICY],
                            capture_output=True, text=True, timeout=30, env=READ_TOKEN_ENVIRONMENT)
    assert result.returncode == 2 and "cannot open the store" in result.stderr, result.stderr


@pytest.mark.parametrize("mistake, says", [
    ("user", "refused user nobody_here"),
    ("database", "database no_such_db does not exist"),
    ("port", "nothing listens at 127.0.0.1:"),
])
def test_a_postgresql_mistake_is_named_at_once_in_one_line(postgres, mistake, says):
    base, name = str(postgres).rsplit("/", 1)
    scheme, rest = base.split("://")
    user, address = rest.split("@")
    location = {"user": f"{scheme}://nobody_here@{address}/{name}", "database": f"{base}/no_such_db",
                "port": f"{scheme}://{user}@127.0.0.1:{postgres_cluster.free_port()}/{name}"}[mistake]
    started = time.monotonic()
    result = subprocess.run([CLI, "serve", "--store", location, *STORE_POLICY], capture_output=True, text=True,
                            timeout=60, env=READ_TOKEN_ENVIRONMENT)
    assert result.returncode == 2 and says in result.stderr, result.stderr
    assert time.monotonic() - started < 10  # not the 15 s start-up deadline
    # One line that names the store and the cause; none of the driver's chatter (the start-up
    # warnings about the configuration, which come first, aside).
    assert [line for line in result.stderr.splitlines() if line.strip() and " warning receipt.serve: " not in line] == [
        line for line in result.stderr.splitlines() if "cannot open the store" in line], result.stderr


def refused_at_start(path, *statements):
    """`receipt serve`'s start on an SQLite store made by `statements`: its stderr, once it exited 2."""
    with sqlite3.connect(path) as connection:
        for statement in statements:
            connection.execute(statement)
    result = subprocess.run([CLI, "serve", "--port", "0", "--store", str(path), *STORE_POLICY], capture_output=True, text=True,
                            timeout=30, env=READ_TOKEN_ENVIRONMENT)
    assert result.returncode == 2, result.stderr
    return result.stderr


def test_a_store_of_a_newer_schema_is_refused(tmp_path):
    assert "version 99" in refused_at_start(tmp_path / "newer.db", "CREATE TABLE schema_version (version INTEGER NOT NULL)",
                                            "INSERT INTO schema_version VALUES (99)")


def alive(*flags):
    """A `receipt serve` on a fixed free port, once it answers /healthz: its store may still be migrating,
    and it has not said "listening on"."""
    server = Server("--port", postgres_cluster.free_port(), *flags, announced=False)
    deadline = time.monotonic() + 30
    while True:
        try:
            if server.request("GET", "/healthz")[0] == 200:
                return server
        except OSError:
            assert time.monotonic() < deadline and server.process.poll() is None, server.process.stderr.read()
            time.sleep(0.05)


def held_migration_lock(location):
    """A psql session holding the advisory lock a server's migration takes its turn by."""
    holder = subprocess.Popen(["psql", str(location), "-At", "-q"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    holder.stdin.write("SELECT pg_advisory_lock(7352841);\n\\echo held\n")
    holder.stdin.flush()
    while holder.stdout.readline().strip() != "held":
        assert holder.poll() is None
    return holder


def test_a_store_not_yet_migrated_is_not_used(tmp_path, news_ca, test_ca, story, new_store):
    """A server listens while its store migrates (minutes on a large store: a silent server would be
    restarted by its supervisor): /healthz answers; /readyz and every request that needs the store
    answer 503 STORE_MIGRATING with Retry-After, and a verifyReceipt that the store would merge Apple's
    retry status. "listening on" comes once the store is ready; then every route works. Here the
    migration waits for another's turn (its advisory lock, held by psql); stopped meanwhile, the
    server stops at once."""
    location = new_store()
    if not str(location).startswith("postgres"):
        pytest.skip("the migration's turn is PostgreSQL's advisory lock; SQLite's is the file's lock")
    flags = ("--store", location, "--anchor", news_ca[0] / "root.pem", "--anchor", test_ca / "root.pem", *STORE_POLICY)
    holder = held_migration_lock(location)
    stopped = alive(*flags)
    started = time.monotonic()
    assert stopped.stop() == 0 and time.monotonic() - started < 5
    server = alive(*flags)
    try:
        status, body, response = server.request("GET", "/readyz")
        assert (status, json.loads(body)["status"], response.getheader("Retry-After")) == (503, "STORE_MIGRATING", "5")
        _, _, body = story[0]
        for method, path, data in [("POST", "/notifications/v2", body), ("GET", f"/v1/subscriptions/{ORIGINAL}", None),
                                   ("GET", f"/v1/entitlements?appAccountToken={TOKEN}", None),
                                   ("GET", "/v1/stats/subscriptions", None), ("GET", "/v1/events", None)]:
            status, answer = server.json(method, path, data)
            assert (status, answer["status"]) == (503, "STORE_MIGRATING"), path
        # A receipt of a subscription waits for the store; one without, which merges nothing, does not.
        assert server.verify_receipt("/sandbox/verifyReceipt", receipt_of_first_purchase(tmp_path, test_ca, story))["status"] == 21005
        assert server.verify_receipt("/verifyReceipt", b"not a receipt")["status"] == 21002
        assert server.request("GET", "/metrics")[0] == 200
        assert select.select([server.process.stdout], [], [], 0.5)[0] == [], "listening on before the store was ready"
        holder.stdin.close()
        holder.wait()
        assert server.process.stdout.readline() == f"listening on 127.0.0.1:{server.port}\n"
        assert server.request("GET", "/readyz")[0] == 200
        assert count(location, "notifications") == 0
        assert post(server, body)[0] == 200 and count(location, "notifications") == 1
    finally:
        holder.kill()
        server.stop()


def test_sigterm_stops_a_long_sqlite_migration_and_its_transaction_is_undone(tmp_path):
    """SIGTERM while an SQLite store migrates for seconds (schema 5 to today's, 10,000 subscriptions
    of `make bench`'s synthetic history) stops the server within the statement it was in; the
    migration's transaction is rolled back, so the store is still of schema 5, and the next start
    migrates it whole."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench"))
    import bench_figures
    bench_figures.SUBSCRIPTIONS = 10_000
    location = tmp_path / "large.db"
    flags = ("--store", location, "--bundle-id", "com.example.bench", "--environment", "production",
             "--app-apple-id", "1234567890")
    assert Server(*flags).stop() == 0  # the schema
    bench_figures.fill_sqlite(location, *bench_figures.history(int(time.time() * 1000)))
    downgrade_to_schema_5(location)
    server = alive(*flags)
    status, body, _ = server.request("GET", "/readyz")
    assert (status, json.loads(body)["status"]) == (503, "STORE_MIGRATING")
    time.sleep(0.5)
    assert server.request("GET", "/readyz")[0] == 503  # still migrating when it is told to stop
    signalled = time.monotonic()
    assert server.stop() == 0
    print(f"stopped {time.monotonic() - signalled:.1f} s after SIGTERM")
    assert table(location, "SELECT max(version) FROM schema_version") == [("5",)]
    assert table(location, "SELECT count(*) FROM sqlite_master WHERE name = 'subscription_summaries'") == [("0",)]
    began = time.monotonic()
    assert Server(*flags).stop() == 0
    print(f"migrated whole in {time.monotonic() - began:.1f} s")
    assert table(location, "SELECT max(version) FROM schema_version") == [(SCHEMA_VERSION,)]
    assert table(location, "SELECT count(*) FROM subscription_summaries") == table(
        location, "SELECT count(DISTINCT original_transaction_id) FROM transactions") != [("0",)]


def test_a_store_that_keeps_its_text_in_utf16_is_refused(tmp_path):
    """The quick reads take a text's bytes as SQLite holds them, which are UTF-8 only in a
    UTF-8 database: a store made in UTF-16 (the server makes its own in UTF-8) is refused at
    start, in words, rather than read as mangled text."""
    assert "keeps its text in UTF-16le, not UTF-8" in refused_at_start(
        tmp_path / "utf16.db", "PRAGMA encoding = 'UTF-16le'", "CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)")


def test_unknown_subscription_and_bad_ids(tmp_path, news_ca, test_ca):
    server = store_server(tmp_path, news_ca, test_ca)
    try:
        status, answer = server.json("GET", "/v1/subscriptions/1999")
        assert status == 404 and answer["status"] == "RECEIPT_E_ABSENT"
        for bad in ["abc", "1" * 40, "1%00"]:
            assert server.request("GET", f"/v1/subscriptions/{bad}")[0] == 400, bad
        assert server.request("GET", "/v1/entitlements")[0] == 400
        assert server.request("GET", "/v1/entitlements?appAccountToken=" + "a" * 65)[0] == 400
        assert server.request("GET", "/v1/entitlements?appAccountToken=" + "a" * 64)[0] == 200
        assert server.request("GET", "/v1/entitlements?appAccountToken=%C3%A9")[0] == 400  # visible ASCII only
    finally:
        server.stop()


@pytest.mark.parametrize("purchase_id, stored", [("SANDBOX_b9fc7c9b-8b3a-4d6d-9d7d-0f2f1c1e5a11", True),
                                                 ("b9fc7c9b-8b3a-4d6d-9d7d-0f2f1c1e5a11", False)])
def test_an_external_purchase_token_is_stored_by_the_sandbox_store_only_when_sandbox(
        tmp_path, mint_jws, news_ca, test_ca, now, purchase_id, stored):
    # EXTERNAL_PURCHASE_TOKEN names no environment: Apple takes it from the id's SANDBOX prefix.
    path = tmp_path / "store.db"
    server = store_server(tmp_path, news_ca, test_ca, store=path)
    notification = {"notificationType": "EXTERNAL_PURCHASE_TOKEN", "subtype": "UNREPORTED",
                    "notificationUUID": "6f1f4a2e-0000-4000-8000-0000000000e2", "version": "2.0", "signedDate": now,
                    "externalPurchaseToken": {"externalPurchaseId": purchase_id, "tokenCreationDate": now,
                                              "appAppleId": 1234567890, "bundleId": "com.example.minted"}}
    try:
        status, answer = post(server, json.dumps({"signedPayload": mint_jws.sign(notification, news_ca[1])}))
    finally:
        server.stop()
    if stored:
        assert status == 200, answer
        assert table(path, "SELECT notification_type FROM notifications") == [("EXTERNAL_PURCHASE_TOKEN",)]
    else:  # a production token at a sandbox store: another app's data, never stored
        assert status == 400 and answer["status"] == "RECEIPT_E_ENVIRONMENT_MISMATCH", answer


def test_entitlements_agree_with_the_cli_on_the_same_data(tmp_path, news_ca, test_ca, story, new_store):
    path = new_store()
    server = store_server(tmp_path, news_ca, test_ca, store=path)
    try:
        for _, _, body in story:
            post(server, body)
        status, served = server.json("GET", f"/v1/entitlements?appAccountToken={TOKEN.upper()}")
        _, state = server.json("GET", f"/v1/subscriptions/{ORIGINAL}")
    finally:
        server.stop()
    assert status == 200
    # The same three transactions and the renewal info, as the store holds them (latest signing
    # of each), through the CLI.
    files = []
    stored = table(path, "SELECT jws FROM transactions") + table(path, "SELECT jws FROM renewal_infos")
    for index, token in enumerate(sorted(row[0] for row in stored)):
        files.append(tmp_path / f"jws{index}.jws")
        files[-1].write_text(token)
    cli = subprocess.run([CLI, "entitlements", "--anchor", news_ca[0] / "root.pem", "--no-apple-root",
                          "--at", rfc3339(served["at_ms"]), *map(str, files)], capture_output=True, text=True, timeout=60)
    assert cli.returncode == 0, cli.stderr
    ours = json.loads(cli.stdout)
    key = lambda purchase: purchase["transaction_id"]
    assert sorted(served["purchases"], key=key) == sorted(ours["purchases"], key=key)
    assert served["subscriptions"] == ours["subscriptions"]
    # The subscription is in its billing grace period: entitled in every part of the answer.
    assert served["active_product_ids"] == ours["active_product_ids"] == ["com.example.minted.monthly"]
    assert served["subscriptions"][0]["active"] is True and served["subscriptions"][0]["in_grace_period"] is True
    assert served["subscription_states"] == [{"original_transaction_id": ORIGINAL, "product_id": "com.example.minted.monthly",
                                              "status": 4, "status_name": "grace_period", "entitled": True}]
    assert state["entitled"] is True


def rfc3339(milliseconds):
    moment = datetime.datetime.fromtimestamp(milliseconds / 1000, datetime.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{milliseconds % 1000:03d}Z"


def receipt_of_first_purchase(tmp_path, test_ca, story):
    """A receipt the app had after its first purchase: the story's first transaction only."""
    first = story[0][1]["data"]["signedTransactionInfo"]
    iso = lambda ms: datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    spec = {"receipt_type": "ProductionSandbox", "bundle_id": "com.example.minted",
            "receipt_creation_date": iso(first["purchaseDate"] + 60_000),
            "in_app": [{"quantity": 1, "product_id": first["productId"], "transaction_id": first["transactionId"],
                        "original_transaction_id": ORIGINAL, "purchase_date": iso(first["purchaseDate"]),
                        "original_purchase_date": iso(first["originalPurchaseDate"]), "product_type": 3,
                        "expires_date": iso(first["expiresDate"]), "web_order_line_item_id": int(first["webOrderLineItemId"]),
                        "is_trial_period": 0, "is_in_intro_offer_period": 0}]}
    spec_path = tmp_path / "spec.json"
    spec_path.write_text(json.dumps(spec))
    run_minter("receipt", tmp_path / "first.der", "--ca", test_ca, "--spec", spec_path)
    return (tmp_path / "first.der").read_bytes()


def test_verify_receipt_shows_later_renewals_refunds_and_pending_renewal_info(tmp_path, news_ca, test_ca, story, new_store):
    receipt = receipt_of_first_purchase(tmp_path, test_ca, story)
    server = store_server(tmp_path, news_ca, test_ca, store=new_store())
    try:
        alone = server.verify_receipt("/sandbox/verifyReceipt", receipt)
        for _, _, body in story:
            post(server, body)
        current = server.verify_receipt("/sandbox/verifyReceipt", receipt)
        latest_only = server.verify_receipt("/sandbox/verifyReceipt", receipt, **{"exclude-old-transactions": True})
    finally:
        server.stop()
    assert alone["status"] == current["status"] == 0
    assert [entry["transaction_id"] for entry in alone["latest_receipt_info"]] == ["2000000000000001"]
    assert "pending_renewal_info" not in alone
    assert current["receipt"] == {**alone["receipt"], **{k: current["receipt"][k] for k in current["receipt"] if k.startswith("request_date")}}
    entries = current["latest_receipt_info"]
    assert [entry["transaction_id"] for entry in entries] == ["2000000000000001", "200000000000000101", "200000000000000102"]
    refunded = entries[1]
    refund = story[4][1]["data"]["signedTransactionInfo"]
    assert refunded["cancellation_date_ms"] == str(refund["revocationDate"]) and refunded["cancellation_reason"] == "0"
    assert "cancellation_date" not in entries[0] and "cancellation_date" not in entries[2]
    assert entries[2]["expires_date_ms"] == str(story[-1][1]["data"]["signedTransactionInfo"]["expiresDate"])
    assert entries[2]["subscription_group_identifier"] == "21000001"
    # The receipt's own entry and the signed copy of it read the same where both speak.
    for key in ("product_id", "original_transaction_id", "purchase_date_ms", "expires_date_ms", "web_order_line_item_id",
                "is_trial_period", "is_in_intro_offer_period", "quantity"):
        assert entries[0][key] == alone["latest_receipt_info"][0][key], key
    assert [entry["transaction_id"] for entry in latest_only["latest_receipt_info"]] == ["200000000000000102"]
    (pending,) = current["pending_renewal_info"]
    assert pending["original_transaction_id"] == ORIGINAL and pending["is_in_billing_retry_period"] == "1"
    assert current["latest_receipt"] == alone["latest_receipt"]


def quick_reads(server):
    """receipt_store_quick_reads_total by outcome (read, handed_on), from /metrics."""
    text = server.request("GET", "/metrics")[1].decode()
    return {outcome: float((re.search(rf'^receipt_store_quick_reads_total\{{outcome="{outcome}"\}} (\S+)$', text, re.M)
                            or [0, 0])[1]) for outcome in ("read", "handed_on")}


#: Past SQLiteQuickReads.maxRows (160): a merged read of this subscription's rows is handed on.
MANY_RENEWALS = 170


def test_a_read_too_long_to_make_at_once_gets_the_same_answer(tmp_path, news_ca, test_ca, story, mint_jws, new_store):
    """SQLite makes a point read on the caller's thread only up to 160 rows; past them the
    same statement runs on sqlite-nio's readers. A subscription of 173 transactions: its
    state (100 rows and the renewal info) is read at once, verifyReceipt's merge (every
    row) is handed on, and both answers hold what was stored, as PostgreSQL's do."""
    _, chains = news_ca
    renewed = story[5][1]  # a DID_RENEW of the story
    renewals = []
    for index in range(MANY_RENEWALS):
        signed = renewed["signedDate"] + 1 + index
        transaction = dict(renewed["data"]["signedTransactionInfo"], transactionId=str(2100000000000000 + index),
                           webOrderLineItemId=str(2200000000000000 + index), signedDate=signed,
                           purchaseDate=renewed["signedDate"] + index * 60_000,
                           expiresDate=renewed["signedDate"] + (index + 1) * 60_000)
        notification = dict(renewed, signedDate=signed, notificationUUID=f"6f1f4a2e-0000-4000-9000-{index:012d}",
                             data=dict(renewed["data"], signedTransactionInfo=transaction,
                                       signedRenewalInfo=dict(renewed["data"]["signedRenewalInfo"], signedDate=signed)))
        renewals.append(mint_jws.sign_notification(notification, chains))
    receipt = receipt_of_first_purchase(tmp_path, test_ca, story)
    store = new_store()
    server = store_server(tmp_path, news_ca, test_ca, store=store)
    try:
        for body in [body for _, _, body in story] + renewals:
            assert post(server, body)[0] == 200
        before = quick_reads(server)
        status, state = server.json("GET", f"/v1/subscriptions/{ORIGINAL}")
        after_state = quick_reads(server)
        merged = server.verify_receipt("/sandbox/verifyReceipt", receipt)
        after_merge = quick_reads(server)
    finally:
        server.stop()
    assert status == 200 and merged["status"] == 0
    stored = ["2000000000000001", "200000000000000101", "200000000000000102"] + [str(2100000000000000 + i) for i in range(MANY_RENEWALS)]
    assert sorted(entry["transaction_id"] for entry in merged["latest_receipt_info"]) == sorted(stored)
    # The state reads the 100 most recently signed (StoreSchema.stateTransactionsPerSubscription);
    # the story's last period, signed last, still decides (the added renewals are a minute each, earlier).
    assert state["transaction_count"] == 100
    assert state["transaction_info"]["transactionId"] == "200000000000000102" and state["status"] == 4
    if str(store).endswith(".db"):
        assert after_state["read"] == before["read"] + 1 and after_state["handed_on"] == before["handed_on"]
        assert after_merge["handed_on"] == after_state["handed_on"] + 1 and after_merge["read"] == after_state["read"]
    else:
        assert before == after_merge == {"read": 0, "handed_on": 0}  # PostgreSQL has no quick reads


def checkpoint(path):
    """Moves the WAL's pages into the SQLite file (another connection may, as `receipt serve` runs)."""
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0  # not busy


def test_quick_reads_map_the_store_and_follow_it_as_it_grows(tmp_path, news_ca, test_ca, story, mint_jws, now):
    """SQLite's quick reads map the store's file (a stored JWS lies mostly in overflow pages,
    which SQLite otherwise reads with a pread each, as it never caches them). A read after the
    WAL was moved into the file, and after the file grew past what was mapped first (more
    subscriptions, checkpointed again), each gets what was stored, at once."""
    _, chains = news_ca
    path = tmp_path / "store.db"
    server = store_server(tmp_path, news_ca, test_ca, store=path)
    try:
        for _, _, body in story[:3]:
            assert post(server, body)[0] == 200
        checkpoint(path)
        before = quick_reads(server)
        early = state_of(server)
        maps = pathlib.Path(f"/proc/{server.process.pid}/maps").read_text().splitlines()
        size = path.stat().st_size
        for subscription in range(1, 41):  # (notification_story's UUIDs end in the id's last six digits)
            for _, payload in mint_jws.notification_story(str(3100000000000001 + subscription * 1000), TOKEN, now=now):
                assert post(server, mint_jws.sign_notification(payload, chains))[0] == 200
        for _, _, body in story[3:]:
            assert post(server, body)[0] == 200
        checkpoint(path)
        grown = path.stat().st_size
        late = state_of(server)
        other = state_of(server, "3100000000040001")
        after = quick_reads(server)
    finally:
        assert server.stop() == 0
    assert any(line.endswith(str(path)) for line in maps), "the store file is not mapped"
    assert grown > 2 * size, (size, grown)
    assert early["transaction_info"]["transactionId"] == story[2][1]["data"]["signedTransactionInfo"]["transactionId"]
    assert early["transaction_count"] == 2
    assert (late["transaction_count"], late["transaction_info"]["transactionId"], late["status"]) == (3, "200000000000000102", 4)
    assert other["transaction_count"] == 3 and other["status"] == 4
    assert after["read"] == before["read"] + 3 and after["handed_on"] == before["handed_on"]


def test_killed_mid_stream_loses_nothing_acknowledged(tmp_path, news_ca, test_ca, mint_jws, now, new_store):
    """SIGKILL while notifications are being posted from eight threads (so that they share
    transactions: GroupCommit): every one that got a 200 is in the store after a restart."""
    _, chains = news_ca
    bodies = {}
    for subscription in range(40):
        original = str(3000000000000001 + subscription * 1000)
        for name, payload in mint_jws.notification_story(original, TOKEN, now=now)[:3]:
            bodies[payload["notificationUUID"]] = mint_jws.sign_notification(payload, chains)
    path = new_store()
    server = store_server(tmp_path, news_ca, test_ca, store=path)
    acknowledged, lock = set(), threading.Lock()
    items = list(bodies.items())

    def send(part):
        for uuid, body in part:
            try:
                status, answer = post(server, body)
            except OSError:
                return
            if status == 200:
                with lock:
                    acknowledged.add(uuid)

    threads = [threading.Thread(target=send, args=(items[i::8],)) for i in range(8)]
    for thread in threads:
        thread.start()
    while len(acknowledged) < 30:
        time.sleep(0.005)
    server.process.send_signal(signal.SIGKILL)
    server.process.wait(10)
    for thread in threads:
        thread.join(30)
    assert 30 <= len(acknowledged) < len(bodies), len(acknowledged)
    stored = {row[0] for row in table(path, "SELECT notification_uuid FROM notifications")}
    assert acknowledged <= stored, acknowledged - stored
    # Restarted on the same file, the rest goes in and the first ones are duplicates.
    server = store_server(tmp_path, news_ca, test_ca, store=path)
    try:
        outcomes = [post(server, body)[1]["stored"] for body in bodies.values()]
    finally:
        server.stop()
    assert outcomes.count(False) == len(stored)
    assert count(path, "notifications") == len(bodies)

def test_a_store_gone_away_gets_apples_retry_status_and_non_2xx(tmp_path, news_ca, test_ca, story):
    """PostgreSQL stopped under a running server: /verifyReceipt answers 21005 (Apple's "retry")
    rather than the receipt alone, and a notification gets 503, so that Apple sends it again."""
    if postgres_cluster.server_binaries() is None:
        pytest.skip("PostgreSQL's server is not installed (scripts/install-deps.sh test)")
    receipt = receipt_of_first_purchase(tmp_path, test_ca, story)
    with postgres_cluster.cluster() as url:
        server = store_server(tmp_path, news_ca, test_ca, store=url)
        try:
            assert post(server, story[0][2])[0] == 200
            assert server.verify_receipt("/sandbox/verifyReceipt", receipt)["status"] == 0
            url.stop()
            assert server.verify_receipt("/sandbox/verifyReceipt", receipt) == {"status": 21005}
            status, answer = post(server, story[1][2])
            assert status == 503 and answer["status"] == "STORE_UNAVAILABLE" and "send again" in answer["detail"]
            status, answer = server.json("GET", f"/v1/subscriptions/{ORIGINAL}")
            assert status == 503 and answer["status"] == "STORE_UNAVAILABLE"
            assert server.request("GET", "/healthz")[0] == 200
        finally:
            server.stop()


def test_two_servers_on_one_postgresql_database_give_the_same_answers(tmp_path, news_ca, test_ca, story, postgres):
    """Behind a load balancer: notifications spread over two servers, each delivered to both
    at once as well; both answer the same state, verifyReceipt and entitlements."""
    location = postgres.rsplit("/", 1)[0] + "/shared_by_two"
    subprocess.run(["psql", postgres, "-q", "-c", "CREATE DATABASE shared_by_two"], check=True)
    receipt = receipt_of_first_purchase(tmp_path, test_ca, story)
    first, second = (store_server(tmp_path, news_ca, test_ca, store=location) for _ in range(2))
    try:
        bodies = [body for _, _, body in story]
        random.Random(7).shuffle(bodies)
        outcomes = []

        def deliver(server, part):
            outcomes.extend(post(server, body)[1]["stored"] for body in part)

        threads = [threading.Thread(target=deliver, args=(server, bodies)) for server in (first, second)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert outcomes.count(True) == len(story) and outcomes.count(False) == len(story)
        assert state_of(first) == state_of(second)
        assert state_of(first)["status_name"] == "grace_period"
        answers = [server.verify_receipt("/sandbox/verifyReceipt", receipt) for server in (first, second)]
        for answer in answers:
            answer["receipt"] = {k: v for k, v in answer["receipt"].items() if not k.startswith("request_date")}
        assert answers[0] == answers[1] and len(answers[0]["latest_receipt_info"]) == 3
        accounts = [server.json("GET", f"/v1/entitlements?appAccountToken={TOKEN}")[1] for server in (first, second)]
        for account in accounts:
            account.pop("at_ms")
        assert accounts[0] == accounts[1]
    finally:
        first.stop()
        second.stop()
    assert count(location, "notifications") == len(story)



# ------------------------------------------------- catch-up: the App Store Server API

API_KEY_ID, API_ISSUER_ID, API_BUNDLE_ID = MOCK_API_IDS["key_id"], MOCK_API_IDS["issuer_id"], MOCK_API_IDS["bundle_id"]
MOCK_ORIGINAL = "2000000000000001"  # the mock's customer: 45 transactions, 12 notifications in pages of 5


@pytest.fixture(scope="module")
def api_mock(tmp_path_factory):
    """(base URL, key file, CA root, requests()) of tools/mock_appstore_api.py for this module."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    directory = tmp_path_factory.mktemp("catch-up-mock")
    key = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    with api_mock_running(directory, key) as (base, requests):
        yield base, directory / "key.pem", directory / "ca" / "root.pem", requests


def api_flags(api_mock):
    base, key, root, _ = api_mock
    return ["--anchor", root, "--no-apple-root", "--bundle-id", API_BUNDLE_ID, "--environment", "sandbox",
            "--api-private-key-file", key,
            "--api-key-id", API_KEY_ID, "--api-issuer-id", API_ISSUER_ID, "--api-environment", "sandbox",
            "--api-base-url", base]


def test_an_unknown_subscription_is_looked_up_once(tmp_path, api_mock, new_store):
    requests = api_mock[3]
    server = Server("--store", new_store(), *api_flags(api_mock))
    try:
        before = len(requests())
        status, state = server.json("GET", f"/v1/subscriptions/{MOCK_ORIGINAL}")
        asked = [request["path"] for request in requests()[before:]]
        status_again, again = server.json("GET", f"/v1/subscriptions/{MOCK_ORIGINAL}")
        asked_again = len(requests()) - before - len(asked)
    finally:
        server.stop()
    assert status == status_again == 200, state
    assert state["transaction_count"] == 45  # every page of the history (three of 20)
    assert asked == [f"/inApps/v2/history/{MOCK_ORIGINAL}"] * 3 + [f"/inApps/v1/subscriptions/{MOCK_ORIGINAL}"]
    assert state["renewal_info"]["originalTransactionId"] == MOCK_ORIGINAL
    assert asked_again == 0 and again["transaction_count"] == 45


def test_a_subscription_apple_does_not_know_is_404_and_remembered(tmp_path, api_mock):
    requests = api_mock[3]
    server = Server("--store", tmp_path / "s.db", *api_flags(api_mock))
    try:
        before = len(requests())
        first = server.json("GET", "/v1/subscriptions/1999999999999999")
        second = server.json("GET", "/v1/subscriptions/1999999999999999")
        asked = len(requests()) - before
    finally:
        server.stop()
    assert first[0] == second[0] == 404 and "App Store" in first[1]["detail"]
    assert asked == 1


def test_without_credentials_an_unknown_subscription_says_so(tmp_path):
    server = Server("--store", tmp_path / "s.db", *STORE_POLICY)
    try:
        status, answer = server.json("GET", f"/v1/subscriptions/{MOCK_ORIGINAL}")
    finally:
        server.stop()
    assert status == 404 and "--api-private-key-file" in answer["detail"]


def sync(api_mock, store, *flags, since=None):
    base, key, root, _ = api_mock
    since = since or rfc3339(int(time.time() * 1000) - 30 * DAY)
    return subprocess.run([CLI, "sync", "--store", str(store), "--since", since, "--anchor", str(root), "--no-apple-root",
                           "--environment", "sandbox", "--base-url", base, "--private-key-file", str(key),
                           "--key-id", API_KEY_ID, "--issuer-id", API_ISSUER_ID, "--bundle-id", API_BUNDLE_ID, *flags],
                          capture_output=True, text=True, timeout=120), since


def test_sync_pulls_notification_history_then_transaction_histories(tmp_path, api_mock, new_store):
    store = new_store()
    result, _ = sync(api_mock, store)
    assert result.returncode == 0, result.stderr
    assert "notifications: 12 in 3 pages; subscriptions: 1" in result.stdout
    assert "notification history: 3 pages" in result.stderr  # progress
    assert count(store, "notifications") == 12 and count(store, "transactions") == 45
    status, state = served_state(store, api_mock[2], MOCK_ORIGINAL)
    assert status == 200 and state["transaction_count"] == 45


def served_state(store, anchor, original):
    """(HTTP status, JSON) of GET /v1/subscriptions/{original} from a server on `store` trusting the mock's CA."""
    server = Server("--store", store, "--anchor", anchor, "--no-apple-root", "--bundle-id", API_BUNDLE_ID,
                    "--environment", "sandbox")
    try:
        return server.json("GET", f"/v1/subscriptions/{original}")
    finally:
        server.stop()


def test_sync_resumes_where_it_stopped(tmp_path, api_mock):
    """A sync cut off after the first page of notification history left its position in
    the store; the next run with the same --since asks for the second page first."""
    store = tmp_path / "s.db"
    first, since = sync(api_mock, store)
    assert first.returncode == 0
    since_ms = int(datetime.datetime.strptime(since, "%Y-%m-%dT%H:%M:%S.%f%z").timestamp() * 1000)
    with sqlite3.connect(store) as connection:
        connection.execute("UPDATE settings SET value = ? WHERE key = 'sync.notification_history'",
                           (f"{since_ms} {since_ms + DAY} page-5",))
    requests = api_mock[3]
    before = len(requests())
    second, _ = sync(api_mock, store, since=since)
    history = [r for r in requests()[before:] if r["path"] == "/inApps/v1/notifications/history"]
    assert second.returncode == 0 and "resumed" in second.stdout, second.stderr
    assert history[0]["query"] == {"paginationToken": ["page-5"]}
    assert history[0]["body"]["startDate"] == since_ms and history[0]["body"]["endDate"] == since_ms + DAY
    assert len(history) == 2  # pages from 5 and 10


def sync_settings(store):
    """The store's sync.* settings, by key."""
    return dict(table(store, "SELECT key, value FROM settings WHERE key LIKE 'sync.%'"))


def test_sync_saves_each_page_of_subscriptions_once_and_resumes_after_the_last_pulled(tmp_path, new_store):
    """Each page of notification history saves only the subscriptions it names first, and each
    transaction history pulled only its id: a step costs the same however many came before
    (the whole list saved at every step was quadratic). The history names 12 subscriptions, 5
    a page; the last in pulling order, 9000000000000666, has a tampered history, so the run
    stops there and the next run pulls it alone."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    named = [str(2000000000000002 + n) for n in range(11)] + ["9000000000000666"]
    key = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    (tmp_path / "mock").mkdir()
    with api_mock_running(tmp_path / "mock", key, "--history-names", ",".join(named)) as (base, requests):
        api = (base, tmp_path / "mock" / "key.pem", tmp_path / "mock" / "ca" / "root.pem", requests)
        store = new_store()
        first, since = sync(api, store)
        saved = sync_settings(store)
        before = len(requests())
        second, _ = sync(api, store, since=since)
        pulled_again = [r["path"].rsplit("/", 1)[1] for r in requests()[before:] if r["path"].startswith("/inApps/v2/history/")]
    assert first.returncode != 0, first.stdout
    pages = [value.split(",") for key, value in sorted(saved.items()) if key.startswith("sync.subscriptions_named.")]
    assert [len(page) for page in pages] == [5, 5, 2]  # each page's own ids, never the list so far
    assert sorted(sum(pages, [])) == sorted(named)
    assert saved["sync.subscriptions_done_through"] == "2000000000000012"  # all but the tampered one pulled
    assert "sync.subscriptions_pending" not in saved
    assert second.returncode == first.returncode and "resum" in second.stdout + second.stderr
    assert set(pulled_again) == {"9000000000000666"}, pulled_again


def test_sync_goes_on_from_the_whole_list_an_earlier_build_saved(tmp_path, api_mock):
    """A store an earlier build left mid-sync holds every subscription still to pull under one
    key: the next run pulls those, then leaves no sync position behind."""
    store = tmp_path / "s.db"
    first, since = sync(api_mock, store)
    assert first.returncode == 0, first.stderr
    since_ms = int(datetime.datetime.strptime(since, "%Y-%m-%dT%H:%M:%S.%f%z").timestamp() * 1000)
    earlier = [MOCK_ORIGINAL, "2000000000000100"]
    with sqlite3.connect(store) as connection:
        connection.execute("INSERT INTO settings (key, value) VALUES ('sync.notification_history', ?), "
                           "('sync.subscriptions_pending', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                           (f"{since_ms} {since_ms + DAY} done", ",".join(earlier)))
    requests = api_mock[3]
    before = len(requests())
    second, _ = sync(api_mock, store, since=since)
    pulled = [r["path"].rsplit("/", 1)[1] for r in requests()[before:] if r["path"].startswith("/inApps/v2/history/")]
    assert second.returncode == 0 and "resumed" in second.stdout, second.stderr
    assert sorted(set(pulled)) == sorted(earlier)
    assert sync_settings(store) == {"sync.notification_history": ""}


def test_sync_refuses_more_than_180_days(tmp_path, api_mock):
    base, key, root, _ = api_mock
    result = subprocess.run([CLI, "sync", "--store", str(tmp_path / "s.db"), "--since", "2020-01-01T00:00:00Z",
                             "--private-key-file", str(key), "--key-id", API_KEY_ID, "--issuer-id", API_ISSUER_ID,
                             "--bundle-id", API_BUNDLE_ID], capture_output=True, text=True, timeout=30)
    assert result.returncode == 2 and "180 days" in result.stderr


# ------------------------------------------- the same state without the server (C ABI, Python)


def test_subscription_state_in_python_matches_the_server(tmp_path, news_ca, test_ca, story, new_store, mint_jws, now):
    import libreceipt
    server = store_server(tmp_path, news_ca, test_ca, store=new_store())
    try:
        for _, _, body in story:
            post(server, body)
        status, served = server.json("GET", f"/v1/subscriptions/{ORIGINAL}")
    finally:
        server.stop()
    tokens = [json.loads(body)["signedPayload"] for _, _, body in reversed(story)]
    verifier = libreceipt.Verifier(apple_root=False, anchors=[(news_ca[0] / "root.pem").read_bytes()])
    ours = libreceipt.subscription_state(ORIGINAL, tokens, served["at_ms"], verifier=verifier)
    assert status == 200 and ours == served
    with pytest.raises(libreceipt.ReceiptError) as refused:
        libreceipt.subscription_state(ORIGINAL, tokens[:1] + ["x" + tokens[1]], served["at_ms"], verifier=verifier)
    assert "token 1" in str(refused.value)
    with pytest.raises(libreceipt.ReceiptError) as absent:
        libreceipt.subscription_state("1999", tokens, served["at_ms"], verifier=verifier)
    assert absent.value.name == "RECEIPT_E_ABSENT"
    # A consumable is no subscription: absent, saying its type (it read as "expired").
    coins = {"transactionId": "7500000000000001", "originalTransactionId": "7500000000000001", "bundleId": "com.example.minted",
             "productId": "com.example.coins", "purchaseDate": now, "originalPurchaseDate": now, "quantity": 1,
             "type": "Consumable", "signedDate": now, "environment": "Sandbox"}
    charge = mint_jws.sign_notification({"notificationType": "ONE_TIME_CHARGE", "notificationUUID": "d0d0b000-0000-4000-8000-000000000001",
                                         "version": "2.0", "signedDate": now, "data": {"bundleId": "com.example.minted",
                                         "environment": "Sandbox", "signedTransactionInfo": coins}}, news_ca[1])
    with pytest.raises(libreceipt.ReceiptError) as consumable:
        libreceipt.subscription_state("7500000000000001", [json.loads(charge)["signedPayload"]], now, verifier=verifier)
    assert consumable.value.name == "RECEIPT_E_ABSENT" and "type Consumable, not an auto-renewable" in str(consumable.value)


def test_sync_with_no_answer_exits_3_as_api_does_and_says_why(tmp_path, api_mock):
    _, key, root, _ = api_mock
    since = rfc3339(int(time.time() * 1000) - DAY)
    common = ["--environment", "sandbox", "--base-url", f"http://127.0.0.1:{postgres_cluster.free_port()}",
              "--private-key-file", str(key), "--key-id", API_KEY_ID, "--issuer-id", API_ISSUER_ID,
              "--bundle-id", API_BUNDLE_ID, "--anchor", str(root), "--no-apple-root"]
    synced = subprocess.run([CLI, "sync", "--store", str(tmp_path / "s.db"), "--since", since, *common],
                            capture_output=True, text=True, timeout=120)
    asked = subprocess.run([CLI, "api", "get_transaction_info", "transactionId=1", "--retries", "0", *common],
                           capture_output=True, text=True, timeout=120)
    assert synced.returncode == asked.returncode == 3, (synced.stderr, asked.stderr)
    for stderr in (synced.stderr, asked.stderr):
        assert "connection refused" in stderr and "HTTP 0" not in stderr, stderr
        assert stderr.count("(") == stderr.count(")"), stderr


def test_readyz_follows_the_store_and_healthz_only_life(postgres):
    with postgres_cluster.cluster() as url:  # its own cluster: this test stops it
        server = Server("--store", url, *STORE_POLICY)
        try:
            assert server.request("GET", "/readyz")[0] == 200
            url.stop()  # the database goes away under the running server
            status, data, _ = server.request("GET", "/readyz", timeout=30)
            assert status == 503 and json.loads(data)["status"] == "STORE_UNAVAILABLE", data
            assert server.request("GET", "/healthz")[0] == 200
        finally:
            server.stop()


@pytest.mark.parametrize("store, code, says", [
    ("{tmp}/store.db", 0, "configuration ok"),
    ("{tmp}/missing-dir/store.db", 2, "does not exist or is not writable"),
])
def test_check_config_reaches_the_store_and_changes_nothing(tmp_path, store, code, says):
    location = store.format(tmp=tmp_path)
    result = subprocess.run([CLI, "serve", "--store", location, *STORE_POLICY, "--check-config"], capture_output=True,
                            text=True, timeout=60, env=READ_TOKEN_ENVIRONMENT)
    assert result.returncode == code and says in result.stdout + result.stderr, (result.stdout, result.stderr)
    assert not (tmp_path / "store.db").exists()  # checked, not created
    if code == 0:  # a store without an App Store Server API key cannot answer refund requests: said at start
        assert "CONSUMPTION_REQUEST refund requests are stored" in result.stderr, result.stderr


def test_start_up_warns_of_what_refuses_or_accepts_more_than_meant():
    result = subprocess.run([CLI, "serve", "--port", "0", "--check-config"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "no --app-apple-id: every production JWS" in result.stderr and "no --bundle-id" in result.stderr
    quiet = subprocess.run([CLI, "serve", "--port", "0", "--check-config", "--bundle-id", "com.example.app",
                            "--environment", "sandbox"], capture_output=True, text=True, timeout=60)
    assert quiet.returncode == 0 and "warning" not in quiet.stderr, quiet.stderr


@pytest.fixture(scope="module")
def tls_postgres(postgres):  # postgres: skipped or failed by name where PostgreSQL is absent
    with postgres_cluster.cluster(tls=True) as url:
        yield url


def with_options(url, host=None, **options):
    base = str(url) if host is None else str(url).replace("@127.0.0.1:", f"@{host}:")
    return base + "?" + "&".join(f"{name}={value}" for name, value in options.items())


def serve_check(location):
    return subprocess.run([CLI, "serve", "--store", location, *STORE_POLICY, "--check-config"], capture_output=True,
                          text=True, timeout=60, env=READ_TOKEN_ENVIRONMENT)


def test_a_store_over_tls_verified_by_its_ca(tmp_path, news_ca, test_ca, story, tls_postgres):
    verified = with_options(tls_postgres, sslmode="verify-ca", sslrootcert=tls_postgres.ca)
    checked = serve_check(verified)
    assert checked.returncode == 0 and "configuration ok" in checked.stdout, checked.stderr
    full = serve_check(with_options(tls_postgres, host="localhost", sslmode="verify-full", sslrootcert=tls_postgres.ca))
    assert full.returncode == 0, full.stderr
    # The pool too: the server takes a notification over TLS (the cluster refuses plain TCP).
    server = store_server(tmp_path, news_ca, test_ca, store=verified)
    try:
        assert post(server, story[0][2])[0] == 200
        assert state_of(server)["transaction_count"] == 1
    finally:
        server.stop()


def test_tls_that_cannot_hold_is_named(tmp_path, tls_postgres, postgres):
    other_ca = tmp_path / "other"
    other_ca.mkdir()
    postgres_cluster.make_certificates(str(other_ca))
    refusals = [
        (with_options(tls_postgres, sslmode="verify-ca", sslrootcert=other_ca / "ca.crt"),
         "the server's certificate does not verify against"),
        (with_options(tls_postgres, sslmode="verify-ca", sslrootcert=tmp_path / "absent.crt"), "sslrootcert"),
        (with_options(tls_postgres, sslmode="disable"), "it takes only TLS: add sslmode="),  # hostssl only
        (with_options(postgres, sslmode="require"), "does not offer TLS"),
        (with_options(postgres, sslmode="verify-everything"), "sslmode is one of disable, prefer, require"),
        (with_options(postgres, sslcert="x.pem"), "option \"sslcert\" is not one this server reads"),
    ]
    for location, says in refusals:
        result = serve_check(location)
        assert result.returncode == 2 and says in result.stderr, (location, result.stderr)


def test_bench_store_times_the_reads_the_server_makes(tmp_path, news_ca, test_ca, story, new_store):
    """`receipt bench-store` (the in-process half of make bench's store rows) answers the same
    reads as the server from a store it fills: a figure for each read, in nanoseconds a call;
    a subscription the store does not know is refused by name, not timed."""
    receipt = receipt_of_first_purchase(tmp_path, test_ca, story)
    body = tmp_path / "verify-body.json"
    body.write_text(json.dumps({"receipt-data": base64.b64encode(receipt).decode()}))
    store = new_store()
    server = store_server(tmp_path, news_ca, test_ca, store=store)
    try:
        for _, _, notification in story:
            assert post(server, notification)[0] == 200
    finally:
        server.stop()
    anchors = ["--anchor", str(news_ca[0] / "root.pem"), "--anchor", str(test_ca / "root.pem")]
    bench = [CLI, "bench-store", "--store", str(store), "--samples", "1", "--calls", "2", *anchors]
    done = subprocess.run([*bench, "--subscription", ORIGINAL, "--verify-receipt-body", str(body)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    assert set(figures) == {"subscription_read", "verify_receipt_merged"}
    assert all(isinstance(value, int) and value > 0 for value in figures.values()), figures
    unknown = subprocess.run([*bench, "--subscription", "2999999999999999"], capture_output=True, text=True, timeout=120)
    assert unknown.returncode != 0 and unknown.stdout == ""
    assert "knows no subscription 2999999999999999" in unknown.stderr
