"""`receipt serve`: started on a free loopback port (--port 0) and spoken to over HTTP.

Every answer is the core's (VerifyReceiptEndpoint, VerdictEndpoint); these tests check
that the server carries them faithfully, and that it holds up: limits, timeouts, slow
and half-sent clients, concurrency, metrics and SIGTERM.
"""
import base64
import http.client
import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import JWS_MINTER_DIR, ROOT, run_minter

CLI = os.environ.get("RECEIPT_CLI", str(ROOT / "build" / "bin" / "receipt"))
SECRET = "0123456789abcdef0123456789abcdef"
REQUEST_DATE_KEYS = {"request_date", "request_date_ms", "request_date_pst"}


#: The read token every test server is started with ($RECEIPT_READ_TOKEN); Server sends it on every GET.
READ_TOKEN = "test-read-token-4f1c9a0e"
#: The write token every test server is started with ($RECEIPT_WRITE_TOKEN): consumption answers and replays.
WRITE_TOKEN = "test-write-token-9b3d7e21"


class Server:
    """A `receipt serve` process; `stop()` sends SIGTERM and returns its exit status. It reads
    the store with READ_TOKEN unless a request says token=None."""

    def __init__(self, *flags, env=None, announced=True):
        """With announced=False (and a --port of the caller's), returns as soon as the process runs, before
        its "listening on" line (which comes once its store is ready)."""
        environment = {**os.environ, "RECEIPT_READ_TOKEN": READ_TOKEN, "RECEIPT_WRITE_TOKEN": WRITE_TOKEN, **(env or {})}
        port = [] if "--port" in map(str, flags) else ["--port", "0"]
        self.process = subprocess.Popen([CLI, "serve", *port, *map(str, flags)], env=environment,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if not announced:
            self.port = int(flags[list(map(str, flags)).index("--port") + 1])
            return
        line = self.process.stdout.readline()
        match = re.fullmatch(r"listening on 127\.0\.0\.1:(\d+)\n", line)
        if not match:
            self.process.kill()
            raise AssertionError(f"serve did not start: {line!r} {self.process.stderr.read()}")
        self.port = int(match.group(1))

    def request(self, method, path, body=None, headers=None, timeout=10, token=READ_TOKEN):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            headers = dict(headers or {})
            if token and method == "GET":
                headers.setdefault("Authorization", f"Bearer {token}")
            connection.request(method, path, body=body, headers=headers,
                               encode_chunked=headers.get("Transfer-Encoding") == "chunked")
            response = connection.getresponse()
            return response.status, response.read(), response
        finally:
            connection.close()

    def json(self, method, path, body=None, **kwargs):
        status, data, _ = self.request(method, path, body, **kwargs)
        return status, json.loads(data)

    def verify_receipt(self, path, receipt_bytes, **members):
        body = {"receipt-data": base64.b64encode(receipt_bytes).decode(), **members}
        status, answer = self.json("POST", path, json.dumps(body))
        assert status == 200  # Apple's protocol: always 200, the status is in the JSON
        return answer

    def stop(self, timeout=10):
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        finally:
            if self.process.poll() is None:
                self.process.kill()


@pytest.fixture(scope="module")
def jws_root(tmp_path_factory):
    sys.path.insert(0, str(JWS_MINTER_DIR))
    import mint_jws
    directory = tmp_path_factory.mktemp("serve-jws-ca")
    mint_jws.create_ca(str(directory))
    return directory / "root.pem", mint_jws.load_ca(str(directory)), mint_jws


@pytest.fixture(scope="module")
def server(test_ca, jws_root):
    """Apple's roots plus both test CAs; no shared secret; short request timeout."""
    started = Server("--anchor", test_ca / "root.pem", "--anchor", jws_root[0], "--request-timeout", "3",
                     "--max-body", 65536)
    yield started
    assert started.stop() == 0


@pytest.fixture(scope="module")
def secret_server(test_ca):
    started = Server("--anchor", test_ca / "root.pem", "--password", "other-app-secret", "--password", SECRET)
    yield started
    assert started.stop() == 0


@pytest.fixture(scope="module")
def production_receipt(test_ca, tmp_path_factory):
    spec = tmp_path_factory.mktemp("spec") / "production.json"
    spec.write_text(json.dumps({"receipt_type": "Production"}))
    path = spec.parent / "production.der"
    run_minter("receipt", path, "--ca", test_ca, "--spec", spec, "--purchases", "2")
    return path.read_bytes()


# ------------------------------------------------------------- verifyReceipt


def test_apples_recorded_answer_field_by_field(server, shared):
    """What the App Store answered for rc__receiptsample1, through /sandbox/verifyReceipt.

    Left out, as a receipt cannot tell them: subscription_group_identifier and
    pending_renewal_info (Apple's records), download_id (not in the receipt), and
    request_date*, which must be the time of this request instead."""
    receipt = (shared / "receipts" / "rc__receiptsample1.der").read_bytes()
    apple = json.loads((shared / "responses" / "rc__verifyReceiptSample1.json").read_text())
    before = int(time.time() * 1000)
    ours = server.verify_receipt("/sandbox/verifyReceipt", receipt)
    after = int(time.time() * 1000)

    assert set(ours) == set(apple) - {"pending_renewal_info"}
    for key in ("status", "environment"):
        assert ours[key] == apple[key], key
    # The recording elides latest_receipt ("..."); Apple's is the receipt itself, re-encoded.
    assert ours["latest_receipt"] == base64.b64encode(receipt).decode()
    left_out = {"download_id"} | REQUEST_DATE_KEYS
    for key, value in apple["receipt"].items():
        if key == "in_app":
            continue
        if key not in left_out:
            assert ours["receipt"][key] == value, f"receipt.{key}"
    assert set(ours["receipt"]) == set(apple["receipt"]) - {"download_id"}
    assert before <= int(ours["receipt"]["request_date_ms"]) <= after
    assert len(ours["receipt"]["in_app"]) == len(apple["receipt"]["in_app"])
    pairs = list(zip(ours["receipt"]["in_app"], apple["receipt"]["in_app"])) + \
        list(zip(ours["latest_receipt_info"], apple["latest_receipt_info"]))
    assert len(ours["latest_receipt_info"]) == len(apple["latest_receipt_info"])
    for mine, theirs in pairs:
        theirs = {k: v for k, v in theirs.items() if k != "subscription_group_identifier"}
        assert mine == theirs


def test_request_date_is_the_time_of_the_request(server, minted):
    before = int(time.time() * 1000)
    answer = server.verify_receipt("/sandbox/verifyReceipt", minted["der"].read_bytes())
    after = int(time.time() * 1000)
    receipt = answer["receipt"]
    assert answer["status"] == 0
    assert before <= int(receipt["request_date_ms"]) <= after
    assert receipt["request_date"].endswith(" Etc/GMT") and receipt["request_date_pst"].endswith(" America/Los_Angeles")


def test_environment_mismatches_answer_like_apple(server, minted, production_receipt):
    sandbox = minted["der"].read_bytes()
    assert server.verify_receipt("/verifyReceipt", sandbox) == {"status": 21007}
    assert server.verify_receipt("/sandbox/verifyReceipt", production_receipt) == {"status": 21008}
    answer = server.verify_receipt("/verifyReceipt", production_receipt)
    assert answer["status"] == 0 and answer["environment"] == "Production"


def test_untrusted_and_tampered_receipts_get_21003(server, mint):
    tampered = mint("--variant", "tampered-payload", "--purchases", "1").read_bytes()
    assert server.verify_receipt("/sandbox/verifyReceipt", tampered) == {"status": 21003}


def test_untrusted_receipt_gets_21003(minted):
    bare = Server()  # Apple's roots only: the test CA is not trusted
    try:
        assert bare.verify_receipt("/sandbox/verifyReceipt", minted["der"].read_bytes()) == {"status": 21003}
    finally:
        assert bare.stop() == 0


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux's /proc to name threads")
def test_workers_are_the_event_loops_that_also_run_the_handlers(minted, test_ca):
    """--workers N gives N event-loop threads, and they are NIO's singleton group, which
    `receipt serve` makes Swift's global executor at start-up (handlers run where the
    request was read); a server that failed to take it over would name its threads NIO-ELT."""
    started = Server("--anchor", test_ca / "root.pem", "--workers", 3)
    try:
        assert started.verify_receipt("/sandbox/verifyReceipt", minted["der"].read_bytes())["status"] == 0
        tasks = f"/proc/{started.process.pid}/task"
        names = [open(f"{tasks}/{task}/comm").read().strip() for task in os.listdir(tasks)]
        assert sorted(name for name in names if name.startswith("NIO-")) == [
            "NIO-SGLTN-1-#1", "NIO-SGLTN-1-#2", "NIO-SGLTN-1-#3"], names
    finally:
        assert started.stop() == 0


def test_bundle_ids_given_to_the_server(test_ca, minted):
    """--bundle-id, repeatable: another app's receipt does not verify (21003), any listed one does."""
    receipt = minted["der"].read_bytes()  # com.example.minted
    other = Server("--anchor", test_ca / "root.pem", "--bundle-id", "com.example.other")
    both = Server("--anchor", test_ca / "root.pem", "--bundle-id", "com.example.other", "--bundle-id", "com.example.minted")
    try:
        assert other.verify_receipt("/sandbox/verifyReceipt", receipt) == {"status": 21003}
        assert other.json("POST", "/v1/verify", receipt)[1]["status"] == "RECEIPT_E_BUNDLE_MISMATCH"
        assert both.verify_receipt("/sandbox/verifyReceipt", receipt)["status"] == 0
        assert both.json("POST", "/v1/verify", receipt)[1]["valid"] is True
    finally:
        assert other.stop() == 0 and both.stop() == 0


def test_other_methods_get_21000(server):
    for method in ("GET", "PUT", "DELETE"):
        status, answer = server.json(method, "/verifyReceipt")
        assert (status, answer) == (200, {"status": 21000}), method
    assert server.json("GET", "/sandbox/verifyReceipt") == (200, {"status": 21000})


@pytest.mark.parametrize("body", [
    b"", b"not json", b"[1,2]", b'"receipt"', b"{}", b'{"receipt-data": 5}', b'{"receipt-data": "!!!"}',
    b'{"receipt-data": ""}', b'{"receipt-data": "aGVsbG8="}', b'{"receipt-data": "x", "password": 7}',
    b'{"receipt-data": "x", "exclude-old-transactions": "yes"}', b'{"receipt-data": "x",',
    b'{"a": [[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]}', b'{"a": [' + b"1," * 5000 + b"1]}",
    b'{"receipt-data": "x", "receipt-data": "y"}', b"\xff\xfe{}",
])
def test_malformed_bodies_get_21002(server, body):
    status, answer = server.json("POST", "/verifyReceipt", body)
    assert (status, answer) == (200, {"status": 21002})


def test_legacy_and_unreadable_receipt_data_gets_21002(server, minted):
    cut = minted["der"].read_bytes()[:200]
    assert server.verify_receipt("/verifyReceipt", cut) == {"status": 21002}


def test_oversized_bodies_get_21002_and_413(server):
    big = b'{"receipt-data": "' + b"A" * 70000 + b'"}'
    assert server.json("POST", "/verifyReceipt", big) == (200, {"status": 21002})
    status, answer = server.json("POST", "/v1/verify", b"A" * 70000)
    assert status == 413 and answer["status"] == "RECEIPT_E_INPUT_TOO_LARGE"
    # Chunked (no Content-Length): refused once the limit is crossed.
    chunks = iter([b'{"receipt-data": "'] + [b"A" * 8192] * 10 + [b'"}'])
    status, data, _ = server.request("POST", "/verifyReceipt", chunks, headers={"Transfer-Encoding": "chunked"})
    assert (status, json.loads(data)) == (200, {"status": 21002})
    # The server is still fine.
    assert server.request("GET", "/healthz")[:2] == (200, b"ok\n")


def raw_exchange(server, request, timeout=10):
    """Sends raw bytes and reads until the server closes or `timeout`: (seconds, bytes)."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", server.port), timeout=timeout) as connection:
        connection.sendall(request)
        answer = b""
        try:
            while chunk := connection.recv(65536):
                answer += chunk
        except socket.timeout:
            pass
    return time.monotonic() - started, answer


@pytest.mark.parametrize("size", ["FFFFFFFFFFFFFFFF", "FFFFFFFF", "10000000000000000", "10001;name=value"])
@pytest.mark.parametrize("path", ["/verifyReceipt", "/v1/verify", "/notifications/v2", "/x/verifyReceipt"])
def test_a_chunk_declared_over_the_limit_is_refused_at_once(server, size, path):
    # Before: the server read on until the request deadline (3 s here, 30 s by default) and
    # closed without an answer. The fixture's limit is 65,536 bytes; 0x10001 is one more.
    # Answered as the route would answer the whole body: Apple's 21002, the verdict's refusal,
    # the server's error body, 404 for a path that is no route.
    request = (f"POST {path} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n{size}\r\nabc").encode()
    seconds, answer = raw_exchange(server, request)
    assert seconds < 2, f"{size} on {path}: {seconds:.1f} s, {answer[:60]!r}"
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"\r\nX-Content-Type-Options: nosniff\r\n" in head and b"\r\nCache-Control: no-store\r\n" in head, head
    if path == "/verifyReceipt":
        assert head.startswith(b"HTTP/1.1 200 OK\r\n") and body == b'{"status":21002}'
    elif path == "/v1/verify":
        assert head.startswith(b"HTTP/1.1 413 ") and json.loads(body)["status"] == "RECEIPT_E_INPUT_TOO_LARGE"
        assert json.loads(body)["valid"] is False
    elif path == "/notifications/v2":
        assert head.startswith(b"HTTP/1.1 413 ") and set(json.loads(body)) == {"status", "detail"}
        assert json.loads(body)["status"] == "RECEIPT_E_INPUT_TOO_LARGE"
    else:  # as the responder answers a path that is no route
        assert head.startswith(b"HTTP/1.1 404 ") and body == b"not found\n"
    assert server.request("GET", "/healthz")[:2] == (200, b"ok\n")


def test_chunked_and_pipelined_requests_within_the_limit_are_answered(server, minted):
    body = json.dumps({"receipt-data": base64.b64encode(minted["der"].read_bytes()).decode()}).encode()
    chunked = b"".join(b"%x;ext=1\r\n%s\r\n" % (len(part), part) for part in (body[:100], body[100:]))
    pipelined = (b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                 b"POST /sandbox/verifyReceipt HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
                 + b"POST /sandbox/verifyReceipt HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                 + chunked + b"0\r\nX-Trailer: 1\r\n\r\n")
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as connection:
        connection.sendall(pipelined)
        answer = b""
        while answer.count(b'{"status":0,') < 2:
            answer += connection.recv(65536)
        assert answer.count(b"HTTP/1.1 200 OK") == 3, answer[:300]
        # The same connection, followed through all three, still catches an oversized chunk.
        connection.sendall(b"POST /v1/verify HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFF\r\nabc")
        refused = b""
        while chunk := connection.recv(65536):
            refused += chunk
    assert refused.startswith(b"HTTP/1.1 413 ") and b"RECEIPT_E_INPUT_TOO_LARGE" in refused, refused[:200]


def test_framing_split_across_reads_is_followed(server, minted):
    # Heads, chunk-size lines and trailers arriving a few bytes at a time: the guard finds each
    # line's end across reads (a CR in one read, its LF in the next) and reads field names in
    # any case, so it still catches the oversized chunk after two requests it let through.
    body = json.dumps({"receipt-data": base64.b64encode(minted["der"].read_bytes()).decode()}).encode()

    def pieces(raw, size=3):
        return [raw[index:index + size] for index in range(0, len(raw), size)]
    parts = (pieces(b"POST /sandbox/verifyReceipt HTTP/1.1\r\nHost: x\r\ncontent-LENGTH: %d\r\n\r\n" % len(body))
             + [body]
             + pieces(b"POST /sandbox/verifyReceipt HTTP/1.1\r\nHost: x\r\nTRANSFER-Encoding: Chunked\r\n\r\n%x\r" % len(body))
             + [b"\n" + body] + pieces(b"\r\n0\r\nX-Trailer: 1\r\n\r\n", 1)
             + pieces(b"POST /verifyReceipt?x=1 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFF\r\nabc", 2))
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as connection:
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for part in parts:
            connection.sendall(part)
            time.sleep(0.001)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    assert time.monotonic() - started < 4, answer[-200:]
    assert answer.count(b"HTTP/1.1 200 OK") == 3 and answer.count(b'{"status":0,') == 2, answer[:300]
    # The query is not part of the path the refusal is chosen by: Apple's 21002 on /verifyReceipt.
    assert answer.endswith(b'{"status":21002}'), answer[-200:]


def test_content_length_with_surrounding_whitespace(server):
    # Optional whitespace around a field value is HTTP's; the limit reads the value so too.
    seconds, answer = raw_exchange(server, b"POST /v1/verify HTTP/1.1\r\nHost: x\r\nContent-Length:  99999999 \r\n"
                                           b"Connection: close\r\n\r\nabc")
    assert seconds < 2 and answer.startswith(b"HTTP/1.1 413 "), answer[:80]
    seconds, answer = raw_exchange(server, b"POST /v1/verify HTTP/1.1\r\nHost: x\r\nContent-Length:  3\r\n"
                                           b"Connection: close\r\n\r\nabc")
    assert seconds < 2 and answer.startswith(b"HTTP/1.1 400 ") and b"RECEIPT_E_BAD_BASE64" in answer, answer[:200]


def test_shared_secret_gets_21004_when_missing_or_wrong(secret_server, minted):
    receipt = minted["der"].read_bytes()  # auto-renewable purchases (expires_date)
    assert secret_server.verify_receipt("/sandbox/verifyReceipt", receipt) == {"status": 21004}
    assert secret_server.verify_receipt("/sandbox/verifyReceipt", receipt, password="wrong") == {"status": 21004}
    assert secret_server.verify_receipt("/sandbox/verifyReceipt", receipt, password=SECRET[:-1]) == {"status": 21004}
    assert secret_server.verify_receipt("/sandbox/verifyReceipt", receipt, password=SECRET)["status"] == 0
    assert secret_server.verify_receipt("/sandbox/verifyReceipt", receipt, password="other-app-secret")["status"] == 0
    # Without auto-renewable purchases no secret is asked for, as Apple's endpoint does.
    assert secret_server.verify_receipt("/sandbox/verifyReceipt", minted["empty"].read_bytes())["status"] == 0


def test_no_subscriptions_no_latest_receipt(server, minted):
    answer = server.verify_receipt("/sandbox/verifyReceipt", minted["empty"].read_bytes())
    assert answer["status"] == 0 and "latest_receipt_info" not in answer and "latest_receipt" not in answer


def test_exclude_old_transactions_keeps_the_latest_renewal(server, minted):
    receipt = minted["der"].read_bytes()  # 3 renewals of one subscription (one original transaction id)
    every = server.verify_receipt("/sandbox/verifyReceipt", receipt)["latest_receipt_info"]
    latest = server.verify_receipt("/sandbox/verifyReceipt", receipt, **{"exclude-old-transactions": True})
    assert [entry["transaction_id"] for entry in every] == ["1000000000", "1000000001", "1000000002"]
    assert [entry["transaction_id"] for entry in latest["latest_receipt_info"]] == ["1000000002"]
    assert len(latest["receipt"]["in_app"]) == 3  # the receipt itself is unchanged


# ---------------------------------------------------------------- /v1/verify


def test_v1_verify_receipt_der_and_base64(server, minted):
    der = minted["der"].read_bytes()
    for body in (der, base64.b64encode(der)):
        status, verdict = server.json("POST", "/v1/verify", body)
        assert status == 200 and verdict["valid"] is True and verdict["status"] == "RECEIPT_OK"
        assert [step["step"] for step in verdict["steps"]][:2] == ["signature", "chain"]
        assert "payload" not in verdict


def test_v1_verify_equals_the_cli(server, minted, test_ca):
    status, verdict = server.json("POST", "/v1/verify?bundle_id=com.example.minted", minted["der"].read_bytes())
    cli = subprocess.run([CLI, "verify", "--json", "--bundle-id", "com.example.minted", "--anchor",
                          str(test_ca / "root.pem"), str(minted["der"])], capture_output=True, text=True)
    assert cli.returncode == 0 and status == 200
    assert verdict == json.loads(cli.stdout)


def test_v1_verify_policy_from_query(server, minted):
    der = minted["der"].read_bytes()
    status, verdict = server.json("POST", "/v1/verify?bundle_id=com.example.other", der)
    assert status == 200 and verdict["valid"] is False and verdict["status"] == "RECEIPT_E_BUNDLE_MISMATCH"
    status, verdict = server.json("POST", "/v1/verify?environment=production", der)
    assert verdict["status"] == "RECEIPT_E_ENVIRONMENT_MISMATCH"
    status, verdict = server.json("POST", "/v1/verify?environment=sandbox&bundle_id=com.example.minted", der)
    assert verdict["valid"] is True


@pytest.mark.parametrize("query", ["bundleid=x", "environment=staging", "app_apple_id=-1",
                                   "bundle_id=a&bundle_id=b"])
def test_v1_verify_refuses_bad_parameters(server, minted, query):
    status, answer = server.json("POST", "/v1/verify?" + query, minted["der"].read_bytes())
    assert status == 400 and answer["valid"] is False and answer["status"] == "RECEIPT_E_INVALID_ARGUMENT"
    assert answer["detail"]


@pytest.mark.parametrize("body,name", [(b"", "RECEIPT_E_EMPTY_INPUT"), (b"\x00garbage", "RECEIPT_E_NOT_A_RECEIPT"),
                                       (b"a.b.c", "RECEIPT_E_BAD_BASE64URL")])
def test_v1_verify_unreadable_bodies_are_400(server, body, name):
    status, answer = server.json("POST", "/v1/verify", body)
    assert status == 400 and answer["status"] == name and answer["valid"] is False


def test_v1_verify_jws_with_payload(server, jws_root):
    root, chains, mint_jws = jws_root
    payload = mint_jws.example_payload()
    token = mint_jws.sign(payload, chains)
    status, verdict = server.json("POST", "/v1/verify?bundle_id=com.example.minted", token)
    assert status == 200 and verdict["valid"] is True, verdict
    assert verdict["type"] == "transaction" and verdict["payload"] == payload
    assert "header" in [step["step"] for step in verdict["steps"]]
    tampered = mint_jws.sign(payload, chains, "payload-changed")
    status, verdict = server.json("POST", "/v1/verify", tampered)
    assert status == 200 and verdict["valid"] is False and verdict["status"] == "RECEIPT_E_SIGNATURE_INVALID"


def test_v1_verify_only_post(server):
    status, _, response = server.request("GET", "/v1/verify")
    assert status == 405 and response.getheader("Allow") == "POST"


# ------------------------------------------------------- health and metrics


def test_healthz_and_unknown_paths(server):
    assert server.request("GET", "/healthz")[:2] == (200, b"ok\n")
    assert server.request("GET", "/nope")[0] == 404
    assert server.request("POST", "/healthz")[0] == 405


def test_metrics_count_requests_latency_and_cache(server, minted):
    server.verify_receipt("/sandbox/verifyReceipt", minted["der"].read_bytes())
    server.json("POST", "/verifyReceipt", b"nope")
    status, data, response = server.request("GET", "/metrics")
    text = data.decode()
    assert status == 200 and response.getheader("Content-Type").startswith("text/plain")

    def value(pattern):
        match = re.search(r"^" + pattern + r" (\d+(?:\.\d+)?)$", text, re.M)
        assert match, f"{pattern} not in /metrics"
        return float(match.group(1))

    assert value(r'receipt_requests_total\{endpoint="/sandbox/verifyReceipt",status="0"\}') >= 1
    assert value(r'receipt_requests_total\{endpoint="/verifyReceipt",status="21002"\}') >= 1
    assert value(r'receipt_request_duration_seconds_count\{endpoint="/sandbox/verifyReceipt"\}') >= 1
    assert value(r'receipt_request_duration_seconds_bucket\{endpoint="/sandbox/verifyReceipt",le="\+Inf"\}') >= 1
    hits = value("receipt_verifier_cache_hits_total")
    server.verify_receipt("/sandbox/verifyReceipt", minted["der"].read_bytes())  # same chain: a hit
    text = server.request("GET", "/metrics")[1].decode()
    assert value("receipt_verifier_cache_hits_total") > hits
    assert value("receipt_verifier_cache_misses_total") >= 1
    server.request("GET", "/scan/" + "x" * 50)
    text = server.request("GET", "/metrics")[1].decode()
    assert 'endpoint="other"' in text and "/scan/" not in text  # unknown paths cannot grow the metrics


def families_with_help(text):
    """The metric families of an exposition, each checked to have a `# HELP` line before its `# TYPE`."""
    lines = text.splitlines()
    families = []
    for index, line in enumerate(lines):
        if line.startswith("# TYPE "):
            name = line.split()[2]
            assert index > 0 and lines[index - 1].startswith(f"# HELP {name} ") and len(lines[index - 1]) > len(name) + 10, name
            families.append(name)
    return families


def test_every_metric_has_help_and_every_endpoint_label_is_a_path(server, minted):
    server.verify_receipt("/verifyReceipt", minted["der"].read_bytes())
    server.request("POST", "/notifications/v2", b"{}")
    server.request("GET", "/v1/events/evt_1")
    text = server.request("GET", "/metrics")[1].decode()
    assert len(families_with_help(text)) >= 5, text
    endpoints = set(re.findall(r'endpoint="([^"]*)"', text))
    assert {"/verifyReceipt", "/notifications/v2", "/v1/events"} <= endpoints, endpoints
    assert all(endpoint.startswith("/") or endpoint == "other" for endpoint in endpoints), endpoints


def test_metrics_name_the_build(server):
    from test_cli import built_version
    version, commit = built_version()
    text = server.request("GET", "/metrics")[1].decode()
    assert "# HELP receipt_build_info " in text
    assert re.search(r'^receipt_build_info\{(version="%s",commit="%s"|commit="%s",version="%s")\} 1(\.0)?$'
                     % (version, commit, commit, version), text, re.M), text


# ------------------------------------------------------- load and robustness


def test_300_half_sent_connections_do_not_hold_up_a_request(server, minted):
    receipt = minted["der"].read_bytes()
    idle = []
    try:
        for index in range(300):
            connection = socket.create_connection(("127.0.0.1", server.port))
            # Half a request: a head that never ends, or a body that never completes.
            connection.sendall(b"POST /verifyReceipt HTTP/1.1\r\nHost: x\r\n" if index % 2 else
                               b"POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"rec")
            idle.append(connection)
        started = time.monotonic()
        answer = server.verify_receipt("/sandbox/verifyReceipt", receipt)
        assert answer["status"] == 0 and time.monotonic() - started < 2
        # --request-timeout 3: every half-sent connection is closed by the server.
        deadline = time.monotonic() + 10
        for connection in idle:
            connection.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                while connection.recv(4096):
                    pass
            except ConnectionResetError:
                pass
    finally:
        for connection in idle:
            connection.close()
    assert server.request("GET", "/healthz")[:2] == (200, b"ok\n")


@pytest.mark.parametrize("payload", [
    b"GARBAGE\r\n\r\n", b"POST /verifyReceipt HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
    b"POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nX-A: " + b"a" * 100_000 + b"\r\n\r\n",  # past the header limit
    b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",  # a TLS ClientHello on the plain port
])
def test_malformed_http_gets_400_and_the_server_stays_up(server, payload):
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as connection:
        connection.sendall(payload)
        assert connection.recv(100).startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert server.request("GET", "/healthz")[:2] == (200, b"ok\n")


def test_connection_cap_holds_new_connections_until_one_closes():
    capped = Server("--max-connections", "2")
    held = [socket.create_connection(("127.0.0.1", capped.port)) for _ in range(2)]
    try:
        for connection in held:
            connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert connection.recv(100).startswith(b"HTTP/1.1 200")  # both accepted, kept alive
        time.sleep(0.2)
        with pytest.raises(TimeoutError):
            capped.request("GET", "/healthz", timeout=1)  # a third waits in the listen queue
        held.pop().close()
        assert capped.request("GET", "/healthz", timeout=5)[:2] == (200, b"ok\n")
    finally:
        for connection in held:
            connection.close()
        assert capped.stop() == 0


def read_response(connection):
    """One HTTP/1.1 response with a Content-Length body: (status line, body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += connection.recv(65536)
    head, body = data.split(b"\r\n\r\n", 1)
    length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
    while len(body) < length:
        body += connection.recv(65536)
    return head.split(b"\r\n")[0], body


def test_expect_100_continue_is_answered_at_once(server, minted):
    body = json.dumps({"receipt-data": base64.b64encode(minted["der"].read_bytes()).decode()}).encode()
    with socket.create_connection(("127.0.0.1", server.port), timeout=0.5) as connection:
        for _ in range(2):  # twice on one connection: the interim answer leaves it usable
            connection.sendall(b"POST /sandbox/verifyReceipt HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                               b"Content-Length: %d\r\n\r\n" % len(body))
            assert connection.recv(100) == b"HTTP/1.1 100 Continue\r\n\r\n"  # within 0.5 s, not after a wait
            connection.sendall(body)
            status, answer = read_response(connection)
            assert status == b"HTTP/1.1 200 OK" and json.loads(answer)["status"] == 0
    # Declared past the limit: no 100, the final answer at once, and no body needed.
    with socket.create_connection(("127.0.0.1", server.port), timeout=2) as connection:
        connection.sendall(b"POST /v1/verify HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                           b"Content-Length: 99999999\r\n\r\n")
        status, answer = read_response(connection)
        assert status.startswith(b"HTTP/1.1 413 ") and json.loads(answer)["status"] == "RECEIPT_E_INPUT_TOO_LARGE"


def test_many_concurrent_clients_get_identical_answers(server, minted):
    receipt = minted["der"].read_bytes()

    def one(_):
        answer = server.verify_receipt("/sandbox/verifyReceipt", receipt)
        for key in REQUEST_DATE_KEYS:
            answer["receipt"].pop(key)
        verdict = server.json("POST", "/v1/verify", receipt)[1]
        return json.dumps(answer, sort_keys=True), json.dumps(verdict, sort_keys=True)

    with ThreadPoolExecutor(max_workers=32) as pool:
        answers = list(pool.map(one, range(400)))
    assert len(set(answers)) == 1
    assert json.loads(answers[0][0])["status"] == 0


def test_sigterm_drains_the_request_in_flight_and_exits_0(test_ca, minted):
    started = Server("--anchor", test_ca / "root.pem")
    body = json.dumps({"receipt-data": base64.b64encode(minted["der"].read_bytes()).decode()}).encode()
    connection = socket.create_connection(("127.0.0.1", started.port), timeout=10)
    try:
        connection.sendall(b"POST /sandbox/verifyReceipt HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body)
                           + body[:100])
        time.sleep(0.3)
        started.process.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        assert started.process.poll() is None  # still draining
        connection.sendall(body[100:])
        response = b""
        while b"\r\n\r\n" not in response or len(response.split(b"\r\n\r\n", 1)[1]) < 20:
            chunk = connection.recv(65536)
            if not chunk:
                break
            response += chunk
        assert response.startswith(b"HTTP/1.1 200")
        assert b'"status":0' in response
        assert started.process.wait(10) == 0
        # New connections are refused once it has stopped.
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", started.port), timeout=2)
    finally:
        connection.close()
        if started.process.poll() is None:
            started.process.kill()


def test_password_file(test_ca, minted, tmp_path):
    secrets = tmp_path / "secrets"
    secrets.write_text("\n  first-secret  \n\r\n" + SECRET + "\n")
    secrets.chmod(0o600)
    started = Server("--anchor", test_ca / "root.pem", "--password-file", secrets)
    try:
        receipt = minted["der"].read_bytes()
        assert started.verify_receipt("/sandbox/verifyReceipt", receipt) == {"status": 21004}
        assert started.verify_receipt("/sandbox/verifyReceipt", receipt, password="first-secret")["status"] == 0
        assert started.verify_receipt("/sandbox/verifyReceipt", receipt, password=SECRET)["status"] == 0
    finally:
        assert started.stop() == 0


def test_bad_flags_exit_2(tmp_path):
    (tmp_path / "empty").write_text("\n \n")
    (tmp_path / "empty").chmod(0o600)
    for flags in (["--max-body", "0"], ["--port", "70000"], ["--anchor", "/nonexistent.pem"],
                  ["--password-file", "/nonexistent"], ["--password-file", str(tmp_path / "empty")]):
        result = subprocess.run([CLI, "serve", *flags], capture_output=True, text=True, timeout=10)
        assert result.returncode == 2, flags
        assert result.stderr.strip()


def test_json_logs_and_an_access_log_for_log_collectors():
    quiet = ("--bundle-id", "com.example.app", "--environment", "sandbox")
    server = Server("--log-format", "json", "--access-log", *quiet)
    try:
        assert server.request("GET", "/healthz")[0] == 200
        assert server.request("GET", "/v1/entitlements?appAccountToken=secret-token")[0] == 503
    finally:
        server.stop()
    lines = [json.loads(line) for line in server.process.stderr.read().splitlines() if line.strip()]  # each line JSON
    assert lines and all({"time", "level", "label", "message"} <= set(line) for line in lines), lines
    access = {(line["method"], line["path"], line["status"]) for line in lines if "path" in line}
    assert access == {("GET", "/healthz", 200), ("GET", "/v1/entitlements", 503)}, lines  # numbers stay numbers
    assert all(type(line["milliseconds"]) is int and line["milliseconds"] >= 0 for line in lines if "path" in line), lines
    assert "secret-token" not in json.dumps(lines)  # a query may carry an account token: never logged
    # Above the level asked for, nothing; without --access-log, no request lines.
    for flags in (("--log-level", "warning", "--access-log"), ()):
        server = Server("--log-format", "json", *flags, *quiet)
        try:
            assert server.request("GET", "/healthz")[0] == 200
        finally:
            server.stop()
        assert "/healthz" not in server.process.stderr.read()
