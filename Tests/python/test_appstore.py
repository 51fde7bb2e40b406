"""The verifyReceipt protocol against a real HTTP server on 127.0.0.1 that this
test starts: environment redirects, retries, HTTP 5xx, malformed JSON, timeouts.
Both the Python binding and the CLI are exercised."""
import base64
import http.server
import json
import os
import subprocess
import threading
import time

import pytest

from libreceipt import Receipt, ReceiptError, Verifier, appstore

CLI = os.environ.get("RECEIPT_CLI")


class FakeAppStore(http.server.BaseHTTPRequestHandler):
    requests = []
    retryable_left = {}

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeAppStore.requests.append((self.path, body))
        if self.path == "/production":
            return self.answer({"status": 21007})
        if self.path in ("/sandbox", "/accept"):
            return self.answer({"status": 0, "environment": "Sandbox", "receipt": {"bundle_id": "com.example.minted"},
                                "echo": {"password": body.get("password"), "exclude": body["exclude-old-transactions"]}})
        if self.path == "/retryable":
            left = FakeAppStore.retryable_left.setdefault(self.path, 2)
            if left > 0:
                FakeAppStore.retryable_left[self.path] = left - 1
                return self.answer({"status": 21199, "is-retryable": True})
            return self.answer({"status": 0})
        if self.path == "/always-busy":
            return self.answer({"status": 21005})
        if self.path == "/unauthenticated":
            return self.answer({"status": 21003, "is_retryable": True})
        if self.path == "/503":
            return self.answer({"status": 0}, code=503)
        if self.path == "/malformed":
            return self.answer(None, raw=b"<html>busy</html>")
        if self.path == "/slow":
            time.sleep(2)
            return self.answer({"status": 0})
        self.answer({"status": 21000})

    def answer(self, document, code=200, raw=None):
        data = raw if raw is not None else json.dumps(document).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeAppStore)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(autouse=True)
def fresh_log():
    FakeAppStore.requests.clear()
    FakeAppStore.retryable_left.clear()


def test_redirect_from_production_to_sandbox(server, minted):
    data = minted["der"].read_bytes()
    answer = appstore.verify_receipt(data, password="s3cret", production_url=server + "/production",
                                     sandbox_url=server + "/sandbox", exclude_old_transactions=True)
    assert answer["status"] == 0 and answer["echo"] == {"password": "s3cret", "exclude": True}
    assert [path for path, _ in FakeAppStore.requests] == ["/production", "/sandbox"]
    assert FakeAppStore.requests[0][1]["receipt-data"] == base64.b64encode(data).decode()


def test_retryable_answers_are_retried_then_accepted(server, minted):
    answer = appstore.verify_receipt(minted["der"].read_bytes(), production_url=server + "/retryable", retries=3)
    assert answer["status"] == 0
    assert len(FakeAppStore.requests) == 3


def test_retries_run_out(server, minted):
    with pytest.raises(appstore.AppStoreUnavailable):
        appstore.verify_receipt(minted["der"].read_bytes(), production_url=server + "/always-busy", retries=1)
    assert len(FakeAppStore.requests) == 2


def test_21003_is_never_retried(server, minted):
    with pytest.raises(appstore.AppStoreRejected) as caught:
        appstore.verify_receipt(minted["der"].read_bytes(), production_url=server + "/unauthenticated", retries=3)
    assert caught.value.status == 21003
    assert len(FakeAppStore.requests) == 1


@pytest.mark.parametrize("path", ["/503", "/malformed"])
def test_server_errors_and_malformed_json(server, minted, path):
    with pytest.raises(appstore.AppStoreUnavailable):
        appstore.verify_receipt(minted["der"].read_bytes(), production_url=server + path, retries=1)


def test_timeout(server, minted):
    started = time.monotonic()
    with pytest.raises(appstore.AppStoreUnavailable):
        appstore.verify_receipt(minted["der"].read_bytes(), production_url=server + "/slow", timeout=0.5, retries=0)
    assert time.monotonic() - started < 1.9


def test_garbage_is_refused_before_any_request(server):
    with pytest.raises(ReceiptError):
        appstore.verify_receipt(b"\x00garbage", production_url=server + "/accept")
    assert FakeAppStore.requests == []


def test_local_response_and_entitlements(minted, test_ca):
    verifier = Verifier(apple_root=False, anchors=[(test_ca / "root.pem").read_bytes()])
    data = minted["der"].read_bytes()
    assert appstore.local_response(data, verifier, expect="production") == {"status": 21007}
    answer = appstore.local_response(data, verifier, expect="sandbox")
    assert answer["status"] == 0 and len(answer["latest_receipt_info"]) == 3
    entitlements = Receipt(data).entitlements(1710460800000, verifier=verifier)  # 2024-03-15
    assert len(entitlements["active_product_ids"]) == 3
    with pytest.raises(ReceiptError) as caught:
        Receipt(data).entitlements(1710460800000, verifier=Verifier())
    assert caught.value.name == "RECEIPT_E_CHAIN_UNTRUSTED"


# ---------------------------------------------------------------- the CLI

needs_cli = pytest.mark.skipif(not CLI, reason="RECEIPT_CLI is not set (run through `make test`)")


def cli(*args):
    return subprocess.run([CLI, *map(str, args)], capture_output=True, timeout=60)


@needs_cli
def test_cli_appstore_verify(server, minted):
    result = cli("appstore-verify", minted["der"], "--password", "pw", "--endpoint", server + "/production",
                 "--sandbox-endpoint", server + "/sandbox")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["echo"]["password"] == "pw"
    assert [path for path, _ in FakeAppStore.requests] == ["/production", "/sandbox"]


@needs_cli
@pytest.mark.parametrize("path, code", [("/unauthenticated", 1), ("/always-busy", 3), ("/503", 3), ("/malformed", 3),
                                        ("/retryable", 0)])
def test_cli_appstore_verify_outcomes(server, minted, path, code):
    result = cli("appstore-verify", minted["der"], "--endpoint", server + path, "--retries", "2")
    assert result.returncode == code, result.stderr


@needs_cli
def test_cli_appstore_verify_timeout_and_bad_input(server, minted, tmp_path):
    assert cli("appstore-verify", minted["der"], "--endpoint", server + "/slow", "--timeout", "0.5",
               "--retries", "0").returncode == 3
    junk = tmp_path / "junk"
    junk.write_bytes(b"\x00junk")
    assert cli("appstore-verify", junk, "--endpoint", server + "/accept").returncode == 2
    assert FakeAppStore.requests == [("/slow", FakeAppStore.requests[0][1])]


@needs_cli
def test_cli_entitlements_and_appstore_json(minted, test_ca):
    anchor = ["--anchor", test_ca / "root.pem", "--no-apple-root"]
    result = cli("entitlements", minted["der"], "--at", "2024-03-15T00:00:00Z", *anchor)
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)["active_product_ids"]) == 3
    assert cli("entitlements", minted["der"], "--at", "2024-03-15T00:00:00Z").returncode == 1  # untrusted
    assert cli("entitlements", minted["der"], "--at", "tomorrow", *anchor).returncode == 2
    local = cli("inspect", "--appstore-json", "--expect", "sandbox", minted["der"], *anchor)
    assert local.returncode == 0 and json.loads(local.stdout)["status"] == 0
    production = cli("inspect", "--appstore-json", minted["der"], *anchor)
    assert json.loads(production.stdout) == {"status": 21007}
