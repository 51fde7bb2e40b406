"""Production->sandbox fallback of the App Store Server API client (opt-in): a call that names a
transaction, which production does not know, goes once to the sandbox, whose answer is verified
as the sandbox's and says so. Production is played by a transport that answers as Apple's
production does for a sandbox purchase; the sandbox is the mock of tools/mock_appstore_api.py."""
import contextlib
import http.server
import json
import os
import subprocess
import threading

import pytest

from libreceipt import ReceiptError, Verifier
from libreceipt.api import APIException, AppStoreServerAPIClient, default_transport

from test_server_api import (BUNDLE_ID, CLI, ISSUER_ID, KEY_ID, ORIGINAL, ca_verifier, mock,  # noqa: F401 (fixture)
                             needs_cli)

FIRST = "2000000000000100"  # the mock customer's first transaction
PRODUCTION = "http://127.0.0.1:9/production"  # never dialled: the transport below answers for it


def production_answering(code, asked):
    """A transport that answers every production request with HTTP 404 and Apple's `code`, and
    sends the rest (the sandbox) to the mock; `asked` collects (host, method, url)."""
    def transport(method, url, headers, body, timeout):
        if url.startswith(PRODUCTION):
            asked.append(("production", method, url))
            return 404, {}, json.dumps({"errorCode": code, "errorMessage": "not found"}).encode()
        asked.append(("sandbox", method, url))
        return default_transport(method, url, headers, body, timeout)
    return transport


def production_client(mock, asked, code=4040010, fallback=True):
    base, key, root, _ = mock
    return AppStoreServerAPIClient(
        key, KEY_ID, ISSUER_ID, BUNDLE_ID, "production", base_url=PRODUCTION, app_apple_id=1234567890,
        verifier=Verifier(bundle_id=BUNDLE_ID, apple_root=False, anchors=[root], environment="production"),
        transport=production_answering(code, asked), sandbox_fallback=fallback, sandbox_base_url=base,
        sandbox_verifier=ca_verifier(root))


def test_a_sandbox_purchase_is_found_in_the_sandbox_and_says_so(mock):
    asked = []
    answer = production_client(mock, asked).get_transaction_info(FIRST)
    assert [where for where, _, _ in asked] == ["production", "sandbox"]
    assert asked[1][2].endswith(f"/inApps/v1/transactions/{FIRST}")
    assert answer["answered_by"] == "sandbox"
    # Verified by the sandbox client's verifier: the mock's transactions say Sandbox.
    assert answer["transaction_info"]["environment"] == "Sandbox"
    # A paged call falls back too, and keeps paging in the sandbox.
    asked.clear()
    pages = list(production_client(mock, asked).iter_transaction_history(ORIGINAL, {}))
    assert asked[0][0] == "production" and {where for where, _, _ in asked[1:]} == {"sandbox"}
    assert len(pages) > 20


def test_without_the_option_production_not_found_is_the_answer(mock):
    asked = []
    with pytest.raises(APIException) as refused:
        production_client(mock, asked, fallback=False).get_transaction_info(FIRST)
    assert refused.value.raw_api_error == 4040010 and [where for where, _, _ in asked] == ["production"]


@pytest.mark.parametrize("code", [4040001, 4040003])  # account, app not found: no question of environment
def test_other_refusals_do_not_fall_back(mock, code):
    asked = []
    with pytest.raises(APIException) as refused:
        production_client(mock, asked, code=code).get_transaction_info(FIRST)
    assert refused.value.raw_api_error == code and [where for where, _, _ in asked] == ["production"]


def test_a_call_that_names_no_transaction_never_falls_back(mock):
    asked = []
    with pytest.raises(APIException):
        production_client(mock, asked).request_test_notification()
    assert [where for where, _, _ in asked] == ["production"]


def test_only_a_production_client_falls_back(mock):
    base, key, root, _ = mock
    with pytest.raises(ValueError, match="only a production client"):
        AppStoreServerAPIClient(key, KEY_ID, ISSUER_ID, BUNDLE_ID, "sandbox", base_url=base,
                                verifier=ca_verifier(root), sandbox_fallback=True)
    with pytest.raises(TypeError):
        AppStoreServerAPIClient(key, KEY_ID, ISSUER_ID, BUNDLE_ID, "production", sandbox_fallback="yes")
    assert issubclass(ReceiptError, ValueError)


@contextlib.contextmanager
def production_that_knows_nothing():
    """A loopback server answering every request as Apple's production does a sandbox purchase."""
    class NotFound(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({"errorCode": 4040010, "errorMessage": "Transaction id not found."}).encode()
            self.send_response(404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *arguments):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotFound)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@needs_cli
def test_the_cli_falls_back_when_asked(mock, tmp_path):
    base, key, root, _ = mock
    (tmp_path / "key.p8").write_bytes(key)
    (tmp_path / "root.pem").write_bytes(root)
    environment = dict(os.environ, APPSTORE_ISSUER_ID=ISSUER_ID, APPSTORE_KEY_ID=KEY_ID,
                       APPSTORE_PRIVATE_KEY_FILE=str(tmp_path / "key.p8"), APPSTORE_BUNDLE_ID=BUNDLE_ID)
    with production_that_knows_nothing() as production:
        command = [CLI, "api", "get_transaction_info", f"transactionId={FIRST}", "--environment", "production",
                   "--base-url", production, "--app-apple-id", "1234567890", "--no-apple-root",
                   "--anchor", str(tmp_path / "root.pem")]
        refused = subprocess.run(command, capture_output=True, text=True, env=environment, timeout=120)
        assert refused.returncode == 1 and "TRANSACTION_ID_NOT_FOUND" in refused.stderr
        found = subprocess.run(command + ["--sandbox-fallback", "--sandbox-base-url", base], capture_output=True,
                               text=True, env=environment, timeout=120)
    assert found.returncode == 0, found.stderr
    answer = json.loads(found.stdout)
    assert answer["answered_by"] == "sandbox" and answer["transaction_info"]["transactionId"] == FIRST
    unusable = subprocess.run([CLI, "api", "get_transaction_info", "transactionId=1", "--environment", "sandbox",
                               "--sandbox-fallback"], capture_output=True, text=True, env=environment, timeout=120)
    assert unusable.returncode == 2 and "--sandbox-fallback is for --environment production" in unusable.stderr


def serve_looking_up_in(mock, tmp_path, production, *flags):
    """`receipt serve` with a production store whose look-ups go to `production`."""
    from test_serve import Server
    base, key, root, _ = mock
    (tmp_path / "key.p8").write_bytes(key)
    (tmp_path / "root.pem").write_bytes(root)
    return Server("--store", tmp_path / "store.db", "--bundle-id", BUNDLE_ID, "--environment", "production",
                  "--app-apple-id", "1234567890", "--no-apple-root", "--anchor", tmp_path / "root.pem",
                  "--api-private-key-file", tmp_path / "key.p8", "--api-key-id", KEY_ID, "--api-issuer-id", ISSUER_ID,
                  "--api-base-url", production, *flags)


@needs_cli
def test_serve_looks_up_app_reviews_sandbox_purchase_when_asked(mock, tmp_path):
    base = mock[0]
    with production_that_knows_nothing() as production:
        server = serve_looking_up_in(mock, tmp_path, production)
        try:
            unknown = server.json("GET", f"/v1/subscriptions/{ORIGINAL}")
        finally:
            server.stop()
        (tmp_path / "fallback").mkdir()
        server = serve_looking_up_in(mock, tmp_path / "fallback", production, "--api-sandbox-fallback",
                                     "--api-sandbox-base-url", base)
        try:
            status, state = server.json("GET", f"/v1/subscriptions/{ORIGINAL}")
            metrics = server.request("GET", "/metrics")[1].decode()
        finally:
            server.stop()
    assert unknown[0] == 404 and "neither the store nor the App Store" in unknown[1]["detail"], unknown
    assert status == 200, state
    # Stored beside production's rows, and saying where it came from.
    assert state["transaction_info"]["environment"] == "Sandbox"
    assert state["transaction_count"] == 45
    assert 'outcome="stored"' in metrics


@needs_cli
@pytest.mark.parametrize("flags, message", [
    (["--api-sandbox-fallback", "--api-environment", "sandbox"], "for a production App Store Server API"),
    (["--api-sandbox-base-url", "http://127.0.0.1:9"], "--api-sandbox-base-url needs --api-sandbox-fallback"),
    (["--api-sandbox-fallback", "--api-calls-per-minute", "3"], "at least 4"),
])
def test_serve_refuses_a_fallback_it_cannot_make(mock, tmp_path, flags, message):
    (tmp_path / "key.p8").write_bytes(mock[1])
    result = subprocess.run([CLI, "serve", "--store", str(tmp_path / "s.db"), "--bundle-id", BUNDLE_ID,
                             "--environment", "production", "--app-apple-id", "1", "--allow-unauthenticated-reads",
                             "--api-private-key-file", str(tmp_path / "key.p8"), "--api-key-id", KEY_ID,
                             "--api-issuer-id", ISSUER_ID, *flags], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and message in result.stderr, result.stderr
