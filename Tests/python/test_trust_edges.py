"""Hardening 4: trust at the new edges. Each test fails on the build before it (the red team's
round 4, ../shared/repro/redteam4): unsigned members handed out as verified, bearer tokens carried
across redirects, deadlines that did not cover the body, OCSP asked for forged JWS, reads open to
anyone, stores that took any app's data, secrets in argv, notifications refused for good when they
could succeed later."""
import asyncio
import contextlib
import http.server
import json
import os
import socketserver
import stat
import subprocess
import sys
import threading
import time

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from conftest import JWS_MINTER_DIR, MOCK_API_IDS, ROOT
from libreceipt import ReceiptError, Verifier
from libreceipt import api
from libreceipt.api import APIException, AppStoreServerAPIClient, AsyncAppStoreServerAPIClient

sys.path.insert(0, str(JWS_MINTER_DIR))
import mint_jws  # noqa: E402

KEY_ID, ISSUER_ID = MOCK_API_IDS["key_id"], MOCK_API_IDS["issuer_id"]
BUNDLE_ID = "com.example.minted"
CLI = os.environ.get("RECEIPT_CLI", str(ROOT / "build" / "bin" / "receipt"))
NOW_MS = int(time.time() * 1000)
KEY = ec.generate_private_key(ec.SECP256R1()).private_bytes(
    serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


@pytest.fixture(scope="module")
def ca(tmp_path_factory):
    directory = tmp_path_factory.mktemp("h4-ca")
    mint_jws.create_ca(str(directory))
    return directory, mint_jws.load_ca(str(directory))


class Endpoint:
    """An HTTP/1.1 server on loopback whose answers `behave(handler)` writes; .paths, .authorizations."""

    def __init__(self, behave):
        self.paths, self.authorizations = [], []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def handle_any(self):
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                outer.paths.append(self.path)
                outer.authorizations.append(self.headers.get("Authorization"))
                try:
                    behave(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_POST = do_PUT = handle_any

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@contextlib.contextmanager
def endpoint(behave):
    served = Endpoint(behave)
    try:
        yield served
    finally:
        served.close()


def answering(document, status=200, headers=()):
    body = document if isinstance(document, bytes) else json.dumps(document).encode()

    def behave(handler):
        handler.send_response(status)
        for name, value in headers:
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)
    return behave


def transaction(transaction_id="2000000000000002", **extra):
    payload = mint_jws.example_payload("transaction")
    payload.update({"transactionId": transaction_id, "signedDate": NOW_MS}, **extra)
    return payload


def client_of(url, ca, cls=AppStoreServerAPIClient, **options):
    verifier = Verifier(bundle_id=BUNDLE_ID, apple_root=False, anchors=[(ca[0] / "root.pem").read_bytes()],
                        environment="sandbox")
    return cls(KEY, KEY_ID, ISSUER_ID, BUNDLE_ID, "sandbox", base_url=url, verifier=verifier, retries=0, **options)


def unsigned_answers(ca):
    chains = ca[1]
    fake = transaction("9999999999999999", productId="com.example.minted.lifetime")
    good = mint_jws.sign(transaction(), chains)
    renewal = mint_jws.sign(dict(mint_jws.example_payload("renewal_info"), signedDate=NOW_MS), chains)
    return {
        "unsigned transactions, no signedTransactions": (
            "history", {"hasMore": False, "revision": "r", "transactions": [fake]}, "signedTransactions is absent"),
        "signedTransactions null, unsigned transactions": (
            "history", {"hasMore": False, "revision": "r", "signedTransactions": None, "transactions": [fake]},
            "signedTransactions is null"),
        "signedTransactions an object": (
            "history", {"hasMore": False, "revision": "r", "signedTransactions": {}, "transactions": [fake]},
            "signedTransactions is an object"),
        "unsigned transactions beside signed ones": (
            "history", {"hasMore": False, "revision": "r", "signedTransactions": [good], "transactions": [fake]},
            "RECEIPT_E_UNSIGNED_MEMBER"),
        "unsigned transaction_info only": ("info", {"transaction_info": fake}, "signedTransactionInfo is absent"),
        "statuses with unsigned renewal_info": (
            "statuses", {"data": [{"lastTransactions": [{"status": 1, "originalTransactionId": "2000000000000001",
                                                         "transaction_info": fake, "renewal_info": {}}]}]},
            "signedTransactionInfo is absent"),
        "notification history of unsigned payloads": (
            "notifications", {"hasMore": False, "notificationHistory": [{"payload": {"notificationType": "REFUND"}}]},
            "signedPayload is absent"),
        "hasMore: 1": ("history", {"hasMore": 1, "revision": "r", "signedTransactions": [good]},
                       "hasMore is a number, not a boolean"),
        "appAppleId: 'hi'": ("history", {"hasMore": False, "appAppleId": "hi", "signedTransactions": [good]},
                             "appAppleId is a string, not an integer"),
        "a renewal info under signedTransactions": (
            "history", {"hasMore": False, "revision": "r", "signedTransactions": [renewal]},
            "RECEIPT_E_WRONG_PAYLOAD_KIND"),
        "a transaction of another id than asked": (
            "info", {"signedTransactionInfo": mint_jws.sign(transaction("2000000000000777"), chains)},
            "RECEIPT_E_NOT_WHAT_WAS_ASKED"),
    }


def ask(client, call):
    if call == "history":
        return list(client.iter_transaction_history("2000000000000001"))
    if call == "info":
        return client.get_transaction_info("2000000000000002")
    if call == "statuses":
        return client.get_all_subscription_statuses("2000000000000001")
    return list(client.iter_notification_history({"startDate": NOW_MS - 86_400_000, "endDate": NOW_MS}))


def test_only_signed_members_come_out_of_an_answer(ca):
    for label, (call, document, says) in unsigned_answers(ca).items():
        with endpoint(answering(document)) as apple:
            with pytest.raises(ReceiptError) as refused:
                ask(client_of(apple.url, ca), call)
            assert says in str(refused.value), (label, str(refused.value))


def test_members_outside_apples_model_are_dropped_and_the_rest_typed(ca):
    token = mint_jws.sign(transaction(), ca[1])
    document = {"hasMore": False, "revision": "r", "bundleId": BUNDLE_ID, "appAppleId": 1234, "environment": "Sandbox",
                "signedTransactions": [token], "injected": {"expiresDate": 4102444800000}}
    with endpoint(answering(document)) as apple:
        page = client_of(apple.url, ca).get_transaction_history("2000000000000001", None, None)
    assert "injected" not in page
    assert page["transactions"][0]["transactionId"] == "2000000000000002"
    assert page["appAppleId"] == 1234 and page["signedTransactions"] == [token]


def test_the_transaction_asked_for_is_the_one_answered(ca):
    document = {"signedTransactionInfo": mint_jws.sign(transaction("2000000000000002"), ca[1])}
    with endpoint(answering(document)) as apple:
        answer = client_of(apple.url, ca).get_transaction_info("2000000000000002")
    assert answer["transaction_info"]["transactionId"] == "2000000000000002"


@pytest.mark.parametrize("cls", [AppStoreServerAPIClient, AsyncAppStoreServerAPIClient])
def test_no_redirect_is_followed_and_no_token_leaves(ca, cls):
    with endpoint(answering({"signedTransactionInfo": "x"})) as other:
        target = other.url.replace("127.0.0.1", "localhost") + "/steal"
        for code in (301, 302, 303, 307, 308):
            with endpoint(answering(b"", status=code, headers=[("Location", target)])) as apple:
                client = client_of(apple.url, ca, cls=cls)
                with pytest.raises(APIException) as refused:
                    result = client.get_transaction_info("2000000000000002")
                    if asyncio.iscoroutine(result):
                        asyncio.run(result)
                assert refused.value.http_status_code == code
        assert other.paths == [] and other.authorizations == []


@pytest.mark.parametrize("url, says", [
    ("http://api.storekit.apple.com", "https"),
    ("http://10.0.0.1:8080/proxy", "https"),
    ("https://user:pass@proxy.example/x", "user name"),
])
def test_base_urls_that_would_give_the_token_away_are_refused(url, says):
    with pytest.raises(ReceiptError, match=says):
        AppStoreServerAPIClient(KEY, KEY_ID, ISSUER_ID, BUNDLE_ID, "sandbox", base_url=url)


def test_loopback_http_and_https_base_urls_are_taken():
    for url in ("http://127.0.0.1:9", "http://localhost:9", "http://[::1]:9", "http://127.1.2.3", "https://proxy.example"):
        AppStoreServerAPIClient(KEY, KEY_ID, ISSUER_ID, BUNDLE_ID, "sandbox", base_url=url)


def test_dot_segments_and_malformed_ids_are_refused_before_sending(ca):
    with endpoint(answering({})) as apple:
        client = client_of(apple.url, ca)
        for value in (".", ".."):
            with pytest.raises(ReceiptError, match="resolve"):
                client.look_up_order_id(value)
            with pytest.raises(ReceiptError, match="resolve"):
                client.get_status_of_subscription_renewal_date_extensions(value, value)
        assert apple.paths == []
    for key_id, issuer_id, says in ((KEY.decode(), ISSUER_ID, "key id"), ("KEY123", ISSUER_ID, "key id"),
                                    (KEY_ID, "not-a-uuid", "issuer id")):
        with pytest.raises(ReceiptError, match=says):
            AppStoreServerAPIClient(KEY, key_id, issuer_id, BUNDLE_ID, "sandbox")


def dripping(handler):
    handler.send_response(200)
    handler.send_header("Content-Length", "100000")
    handler.end_headers()
    handler.wfile.flush()
    for _ in range(100000):
        time.sleep(0.5)
        handler.wfile.write(b" ")
        handler.wfile.flush()


@pytest.mark.parametrize("cls", [AppStoreServerAPIClient, AsyncAppStoreServerAPIClient])
def test_the_timeout_bounds_the_whole_answer_body_included(ca, cls):
    with endpoint(dripping) as apple:
        client = client_of(apple.url, ca, cls=cls, timeout=2)
        start = time.monotonic()
        with pytest.raises(APIException) as failed:
            result = client.get_transaction_info("2000000000000002")
            if asyncio.iscoroutine(result):
                asyncio.run(result)
        elapsed = time.monotonic() - start
    assert failed.value.http_status_code == 0 and "within 2" in str(failed.value)
    assert elapsed < 6, elapsed  # urllib's per-read timeout waited 100000 × 0.5 s


def test_a_huge_answer_is_not_read_past_the_cap():
    size = 256 << 20

    def huge(handler):
        handler.send_response(200)
        handler.send_header("Content-Length", str(size))
        handler.end_headers()
        block = b" " * (1 << 20)
        for _ in range(size >> 20):
            handler.wfile.write(block)

    with endpoint(huge) as apple:
        with pytest.raises(OSError, match="larger than 4194304"):
            api.default_transport("GET", apple.url + "/x", {}, b"", 30)


def test_the_ocsp_transport_follows_no_redirect():
    from libreceipt.revocation import urllib_ocsp_transport
    with endpoint(answering(b"answer")) as other:
        with endpoint(answering(b"", status=302, headers=[("Location", other.url + "/ocsp")])) as responder:
            status, body = urllib_ocsp_transport(responder.url + "/ocsp", b"query", 5)
        assert status == 302 and other.paths == []


def test_a_forged_jws_on_a_trusted_chain_causes_no_ocsp_query(tmp_path):
    from libreceipt.revocation import run_queries
    mint_jws.create_ca(str(tmp_path), ("http://127.0.0.1:9/leaf", "http://127.0.0.1:9/intermediate"))
    chains = mint_jws.load_ca(str(tmp_path))
    verifier = Verifier(bundle_id=BUNDLE_ID, apple_root=False, anchors=[(tmp_path / "root.pem").read_bytes()],
                        environment="sandbox", revocation="hard")
    asked = []

    def transport(url, body, timeout):
        asked.append(url)
        return 500, b""

    forged = mint_jws.sign(transaction(), chains, "payload-changed")  # a trusted x5c, a payload never signed
    assert run_queries(verifier._handle, forged, transport, 1) == [] and asked == []
    # The control: the same chain under a signature that verifies is asked about, twice (leaf, intermediate).
    run_queries(verifier._handle, mint_jws.sign(transaction(), chains), transport, 1)
    assert sorted(asked) == ["http://127.0.0.1:9/intermediate", "http://127.0.0.1:9/leaf"]


# ---------------------------------------------------------------- receipt serve --store
from test_notifications import new_store, postgres  # noqa: E402,F401 (fixtures: SQLite and PostgreSQL stores)
from test_serve import READ_TOKEN, Server  # noqa: E402

STORE_POLICY = ("--bundle-id", BUNDLE_ID, "--environment", "sandbox")


def serve_refusal(*flags, env=None):
    environment = dict(os.environ, **(env or {}))
    environment.pop("RECEIPT_READ_TOKEN", None)
    environment.update(env or {})
    result = subprocess.run([CLI, "serve", "--port", "0", *map(str, flags)], capture_output=True, text=True, timeout=30,
                            env=environment)
    return result.returncode, result.stderr


#: A read token long enough (22 characters at least), so that each row meets the rule it tests first.
READ_TOKEN = "t" * 24


@pytest.mark.parametrize("flags, env, says", [
    (("--store", "{db}", "--environment", "sandbox"), {"RECEIPT_READ_TOKEN": READ_TOKEN}, "--bundle-id"),
    (("--store", "{db}", "--bundle-id", BUNDLE_ID), {"RECEIPT_READ_TOKEN": READ_TOKEN}, "--environment"),
    (("--store", "{db}", "--bundle-id", BUNDLE_ID, "--environment", "production"), {"RECEIPT_READ_TOKEN": READ_TOKEN},
     "--app-apple-id"),
    (("--store", "{db}", *STORE_POLICY), {}, "--read-token-file"),
    (("--store", ":memory:", *STORE_POLICY), {"RECEIPT_READ_TOKEN": READ_TOKEN}, "outlive"),
    (("--store", "", *STORE_POLICY), {"RECEIPT_READ_TOKEN": READ_TOKEN}, "empty"),
    # A mistyped URL never becomes an SQLite file of that name.
    (("--store", "postgres:/receipt@127.0.0.1/db", *STORE_POLICY), {"RECEIPT_READ_TOKEN": READ_TOKEN}, "neither an SQLite file path"),
    (("--store", "postgress://receipt@127.0.0.1/db", *STORE_POLICY), {"RECEIPT_READ_TOKEN": READ_TOKEN}, "neither an SQLite file path"),
    (("--store", "sqlite:/var/lib/store.db", *STORE_POLICY), {"RECEIPT_READ_TOKEN": READ_TOKEN}, "neither an SQLite file path"),
    (("--store", "postgres://receipt:hunter2-secret@127.0.0.1:9/db", *STORE_POLICY), {"RECEIPT_READ_TOKEN": READ_TOKEN},
     "--store-password-file"),
])
def test_a_store_takes_its_own_apps_data_and_no_secret_from_argv(tmp_path, flags, env, says):
    flags = [str(tmp_path / "s.db") if flag == "{db}" else flag for flag in flags]
    code, stderr = serve_refusal(*flags, env=env)
    assert code == 2 and says in stderr, stderr
    assert "hunter2-secret" not in stderr
    assert not (tmp_path / "s.db").exists()


def test_reads_need_the_token_and_catch_up_only_for_it(tmp_path):
    server = Server("--store", tmp_path / "s.db", *STORE_POLICY)
    try:
        for path in ("/v1/subscriptions/2000000000000001", "/v1/entitlements?appAccountToken=x"):
            for token in (None, "wrong", READ_TOKEN[:-1], READ_TOKEN + "x"):
                status, data, response = server.request("GET", path, token=token)
                assert status == 401 and response.getheader("WWW-Authenticate") == "Bearer", (path, token, data)
                assert json.loads(data)["status"] == "UNAUTHORIZED"
            assert server.request("GET", path)[0] in (200, 404)
        assert server.request("GET", "/healthz", token=None)[0] == 200
    finally:
        assert server.stop() == 0
    mode = stat.S_IMODE(os.stat(tmp_path / "s.db").st_mode)
    assert mode == 0o600, oct(mode)
    for suffix in ("-wal", "-shm"):
        if (tmp_path / f"s.db{suffix}").exists():
            assert stat.S_IMODE(os.stat(tmp_path / f"s.db{suffix}").st_mode) == 0o600


def test_reads_open_to_all_only_when_said_and_logged(tmp_path):
    server = Server("--store", tmp_path / "s.db", *STORE_POLICY, "--allow-unauthenticated-reads",
                    env={"RECEIPT_READ_TOKEN": ""})
    try:
        status, data, _ = server.request("GET", "/v1/subscriptions/2000000000000001", token=None)
        assert status == 404 and b"read token" in data  # no catch-up for an anonymous caller
    finally:
        server.stop()
    assert "--allow-unauthenticated-reads" in server.process.stderr.read()


def test_read_tokens_come_from_a_file(tmp_path):
    (tmp_path / "tokens").write_text("first-token-of-22-chars\n\nsecond-token-of-22-chars\n")
    (tmp_path / "tokens").chmod(0o600)
    server = Server("--store", tmp_path / "s.db", *STORE_POLICY, "--read-token-file", tmp_path / "tokens",
                    env={"RECEIPT_READ_TOKEN": ""})
    try:
        for token, status in (("first-token-of-22-chars", 404), ("second-token-of-22-chars", 404), (READ_TOKEN, 401)):
            assert server.request("GET", "/v1/subscriptions/2000000000000001", token=token)[0] == status, token
    finally:
        server.stop()


def test_a_notification_of_another_environment_is_refused_for_good(tmp_path, ca):
    server = Server("--store", tmp_path / "s.db", *STORE_POLICY, "--no-apple-root", "--anchor", ca[0] / "root.pem")
    try:
        story = mint_jws.notification_story("2000000000000001", environment="Production")
        status, data, _ = server.request("POST", "/notifications/v2", mint_jws.sign_notification(story[0][1], ca[1]))
        assert status == 400 and b"ENVIRONMENT" in data, data
        status, _, _ = server.request("GET", "/v1/subscriptions/2000000000000001")
        assert status == 404
    finally:
        server.stop()
    assert "notification refused (400)" in server.process.stderr.read()  # logged at the default level


def test_a_notification_whose_revocation_is_unknown_is_sent_again(tmp_path):
    # The CA names an OCSP responder that is not there: in hard mode the check cannot be made yet.
    mint_jws.create_ca(str(tmp_path / "ca"), ("http://127.0.0.1:9/leaf", "http://127.0.0.1:9/intermediate"))
    chains = mint_jws.load_ca(str(tmp_path / "ca"))
    server = Server("--store", tmp_path / "s.db", *STORE_POLICY, "--no-apple-root", "--anchor",
                    tmp_path / "ca" / "root.pem", "--revocation", "hard", "--ocsp-timeout", "1")
    try:
        story = mint_jws.notification_story("2000000000000001")
        status, data, _ = server.request("POST", "/notifications/v2", mint_jws.sign_notification(story[0][1], chains))
        assert status == 503 and b"REVOCATION_UNKNOWN" in data, (status, data)
    finally:
        server.stop()
    assert "notification deferred (503)" in server.process.stderr.read()


WEEK = 7 * 86_400_000


def weekly_renewals(count, original="2300000000000000", token="0b1e9a42-0000-4000-8000-00000000abcd"):
    """`count` DID_RENEW notifications of one weekly subscription, oldest first; the last period covers now."""
    base = mint_jws.notification_story(original, token)[1][1]
    start = NOW_MS - (count - 1) * WEEK - 86_400_000
    bodies = []
    for index in range(count):
        notification = json.loads(json.dumps(base))
        notification["notificationUUID"] = f"aa00d000-0000-4000-8000-{index:012d}"
        notification["signedDate"] = NOW_MS - 60_000 + index  # signed lately (the test CA is young), in order
        transaction = notification["data"]["signedTransactionInfo"]
        transaction.update(transactionId=str(int(original) + 10 + index), webOrderLineItemId=str(int(original) + 50000 + index),
                           purchaseDate=start + index * WEEK, expiresDate=start + (index + 1) * WEEK,
                           signedDate=notification["signedDate"])
        notification["data"]["signedRenewalInfo"]["signedDate"] = notification["signedDate"]
        notification["data"]["signedRenewalInfo"].pop("gracePeriodExpiresDate", None)
        bodies.append(notification)
    return bodies


def test_reads_cost_a_page_whatever_the_history_holds(new_store, ca):
    count = 130  # past the 100 transactions a read hands the core
    server = Server("--store", new_store(), *STORE_POLICY, "--no-apple-root", "--anchor", ca[0] / "root.pem")
    token = "0b1e9a42-0000-4000-8000-00000000abcd"
    try:
        for notification in weekly_renewals(count, token=token):
            status, data, _ = server.request("POST", "/notifications/v2", mint_jws.sign_notification(notification, ca[1]))
            assert status == 200, data
        status, state = server.json("GET", "/v1/subscriptions/2300000000000000")
        assert status == 200 and state["status_name"] == "active" and state["transaction_count"] == 100
        assert state["transaction_info"]["transactionId"] == str(2300000000000000 + 10 + count - 1)
        periods, cursor, pages = 0, None, 0
        while True:
            query = f"/v1/entitlements?appAccountToken={token}&limit=40" + (f"&cursor={cursor}" if cursor else "")
            status, page = server.json("GET", query)
            assert status == 200, page
            periods += sum(subscription["periods"] for subscription in page["subscriptions"])
            pages += 1
            if pages == 1:  # the most recently signed first: the first page knows the subscription is active
                assert page["subscriptions"][0]["active"] is True and page["subscription_states"][0]["entitled"]
            cursor = page.get("next_cursor")
            if not cursor:
                break
        assert (periods, pages) == (count, 4)
        status, page = server.json("GET", f"/v1/entitlements?appAccountToken={token}")
        assert sum(s["periods"] for s in page["subscriptions"]) == 100 and "next_cursor" in page
        for bad in ("limit=0", "limit=101", "limit=x", "cursor=nonsense", "cursor=12-"):
            assert server.request("GET", f"/v1/entitlements?appAccountToken={token}&{bad}")[0] == 400, bad
    finally:
        server.stop()


def test_serve_shares_ocsp_asks_and_remembers_a_failure(tmp_path):
    def slow_failure(handler):
        time.sleep(1)
        answering(b"", status=500)(handler)

    with endpoint(slow_failure) as responder:
        mint_jws.create_ca(str(tmp_path / "ca"), (responder.url + "/leaf", responder.url + "/intermediate"))
        chains = mint_jws.load_ca(str(tmp_path / "ca"))
        token = mint_jws.sign(transaction(), chains)
        server = Server("--no-apple-root", "--anchor", tmp_path / "ca" / "root.pem", "--bundle-id", BUNDLE_ID,
                        "--revocation", "hard", "--ocsp-timeout", "5")
        try:
            answers = []
            threads = [threading.Thread(target=lambda: answers.append(server.json("POST", "/v1/verify", token)))
                       for _ in range(6)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            assert [status for status, _ in answers] == [200] * 6
            assert all(answer["status"] == "RECEIPT_E_REVOCATION_UNKNOWN" for _, answer in answers), answers
            # Six verifications at once asked once per certificate.
            assert sorted(responder.paths) == ["/intermediate", "/leaf"], responder.paths
            # A failure is remembered: asking again at once costs the responder nothing.
            status, answer = server.json("POST", "/v1/verify", token)
            assert answer["status"] == "RECEIPT_E_REVOCATION_UNKNOWN" and len(responder.paths) == 2
        finally:
            server.stop()


def cli_api(url, ca, key_file, *arguments):
    key_file.write_bytes(KEY)
    environment = dict(os.environ, APPSTORE_ISSUER_ID=ISSUER_ID, APPSTORE_KEY_ID=KEY_ID, APPSTORE_PRIVATE_KEY_FILE=str(key_file),
                       APPSTORE_BUNDLE_ID=BUNDLE_ID)
    start = time.monotonic()
    done = subprocess.run([CLI, "api", *arguments, "--environment", "sandbox", "--base-url", url, "--no-apple-root",
                           "--anchor", str(ca[0] / "root.pem"), "--retries", "0"],
                          capture_output=True, text=True, env=environment, timeout=120)
    return done, time.monotonic() - start


def test_the_cli_bounds_the_whole_answer_and_follows_no_redirect(tmp_path, ca):
    with endpoint(dripping) as apple:
        done, elapsed = cli_api(apple.url, ca, tmp_path / "key.p8", "get_transaction_info", "transactionId=2000000000000002",
                                "--timeout", "2")
    assert done.returncode == 3 and "no whole answer within 2" in done.stderr, done.stderr
    assert elapsed < 8, elapsed  # AsyncHTTPClient's own timeout ends at the head: the drip would last 14 hours
    with endpoint(answering({"signedTransactionInfo": "x"})) as other:
        target = other.url.replace("127.0.0.1", "localhost") + "/steal"
        with endpoint(answering(b"", status=302, headers=[("Location", target)])) as apple:
            done, _ = cli_api(apple.url, ca, tmp_path / "key.p8", "get_transaction_info", "transactionId=2000000000000002")
        assert done.returncode == 1 and "HTTP 302" in done.stderr, done.stderr
        assert other.paths == []


def test_no_frame_of_an_exception_holds_the_bearer_token(ca):
    seen = []

    def refuse(handler):
        seen.append(handler.headers.get("Authorization", "")[7:])
        answering({"errorCode": 4040010, "errorMessage": "Transaction id not found."}, status=404)(handler)

    with endpoint(refuse) as apple:
        with pytest.raises(APIException) as refused:
            client_of(apple.url, ca).get_transaction_info("2000000000000002")
    frames, trace = [], refused.value.__traceback__
    while trace:  # libreceipt's frames (this test's own holds `seen`)
        if "libreceipt" in trace.tb_frame.f_code.co_filename:
            frames.append(repr(trace.tb_frame.f_locals))
        trace = trace.tb_next
    assert seen and seen[0] and len(frames) >= 2 and not any(seen[0] in frame for frame in frames)


def test_a_catch_up_look_up_ends_within_its_deadline(tmp_path, ca):
    (tmp_path / "key.p8").write_bytes(KEY)
    with endpoint(dripping) as apple:
        server = Server("--store", tmp_path / "s.db", *STORE_POLICY, "--no-apple-root", "--anchor", ca[0] / "root.pem",
                        "--api-private-key-file", tmp_path / "key.p8", "--api-key-id", KEY_ID, "--api-issuer-id", ISSUER_ID,
                        "--api-environment", "sandbox", "--api-base-url", apple.url)
        try:
            start = time.monotonic()
            status, answer = server.json("GET", "/v1/subscriptions/2000000000000100", timeout=60)
            elapsed = time.monotonic() - start
        finally:
            server.stop()
    # An API that trickles its answer held a look-up (and its caller) for 4 x 30 s and more.
    assert status == 502 and answer["status"] == "LOOKUP_FAILED" and apple.url not in json.dumps(answer), answer
    assert elapsed < 30, elapsed
