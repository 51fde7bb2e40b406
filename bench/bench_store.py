"""The store rows of `make bench`: `receipt serve --store` with SQLite and with PostgreSQL
(a throwaway cluster, when Debian's postgresql is installed), measured in one run:

- notifications ingested per second: distinct minted notifications (tools/mint_jws.py
  notification_story) POSTed by 8 keep-alive clients, each answered 200 only once stored;
  printed beside an assumed peak of Apple's delivery for an app of 1,000,000 subscribers;
- GET /v1/subscriptions/{id} and POST /verifyReceipt merged with the store, under wrk
  (64 connections), each against its composition floor measured in the same run: the
  framework's empty request under the same load (GET /healthz) plus the in-process work
  (`receipt bench-store`: one store read, the state or the verdict and merged answer,
  16 calls at a time as a server's requests come, so over every core). Target: >= 0.85x.

    bench_store.py OUTDIR
"""
import base64
import datetime
import http.client
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tools"), str(ROOT / "Tests" / "python")]
import mint_jws  # noqa: E402
import postgres_cluster  # noqa: E402

CLI = str(ROOT / "build" / "bin" / "receipt")
CORES = os.cpu_count() or 2
SUBSCRIPTIONS = 60  # x 7 notifications each
SECONDS = int(os.environ.get("SERVE_BENCH_SECONDS", "5"))
# 1,000,000 monthly subscribers renew about 33,000 times a day; each renewal brings a DID_RENEW, and
# about as many other notifications again (renewal status changes, failures, refunds, offers). Assume a
# day's worth arrives within one hour (Apple renews in batches ahead of expiry): the peak we must absorb.
APPLE_PEAK = 1_000_000 / 30 * 2 / 3600


def mint_inputs(directory):
    ca = directory / "jws-ca"
    if not (ca / "root.pem").exists():
        mint_jws.create_ca(str(ca))
    chains = mint_jws.load_ca(str(ca))
    now = int(time.time()) * 1000
    bodies = []
    for index in range(SUBSCRIPTIONS):
        original = str(4000000000000001 + index * 1000)
        # One customer (app account token) per subscription, as apps name their accounts.
        token = f"7e3fb20b-4cdb-47cc-936d-{index:012d}"
        bodies += [mint_jws.sign_notification(payload, chains)
                   for _, payload in mint_jws.notification_story(original, token, now=now)]
    story = mint_jws.notification_story("4000000000000001", now=now)
    first = story[0][1]["data"]["signedTransactionInfo"]
    iso = lambda ms: datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    spec = {"receipt_type": "ProductionSandbox", "bundle_id": "com.example.minted",
            "receipt_creation_date": iso(first["purchaseDate"] + 60_000),
            "in_app": [{"quantity": 1, "product_id": first["productId"], "transaction_id": first["transactionId"],
                        "original_transaction_id": first["originalTransactionId"],
                        "purchase_date": iso(first["purchaseDate"]),
                        "original_purchase_date": iso(first["originalPurchaseDate"]), "product_type": 3,
                        "expires_date": iso(first["expiresDate"]),
                        "web_order_line_item_id": int(first["webOrderLineItemId"])}]}
    (directory / "store-spec.json").write_text(json.dumps(spec))
    receipt_ca = directory / "ca"
    if not (receipt_ca / "root.pem").exists():
        subprocess.run([sys.executable, str(ROOT / "tools" / "mint_receipt.py"), "ca", str(receipt_ca)], check=True,
                       stdout=subprocess.DEVNULL)
    subprocess.run([sys.executable, str(ROOT / "tools" / "mint_receipt.py"), "receipt", str(directory / "store-receipt.der"),
                    "--ca", str(receipt_ca), "--spec", str(directory / "store-spec.json")], check=True)
    body = json.dumps({"receipt-data": base64.b64encode((directory / "store-receipt.der").read_bytes()).decode()})
    (directory / "store-verify-body.json").write_text(body)
    return bodies, [ca / "root.pem", receipt_ca / "root.pem"], first["originalTransactionId"]


#: The read token the bench's server takes; wrk sends it on every request.
READ_TOKEN = "bench-read-token"


def start(store, anchors):
    flags = [flag for anchor in anchors for flag in ("--anchor", str(anchor))]
    process = subprocess.Popen([CLI, "serve", "--port", "0", "--store", str(store), "--bundle-id", "com.example.minted",
                                "--environment", "sandbox", *flags],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               env=dict(os.environ, RECEIPT_READ_TOKEN=READ_TOKEN))
    port = int(re.fullmatch(r"listening on 127\.0\.0\.1:(\d+)\n", process.stdout.readline()).group(1))
    return process, port


def ingest(port, bodies, clients=8, posted=None):
    """Notifications per second; `posted` (a dict), when given, gets when each body was sent."""
    failures = []

    def send(part):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for body in part:
            if posted is not None:
                posted[body] = time.time()
            connection.request("POST", "/notifications/v2", body, {"Content-Type": "application/json"})
            answer = connection.getresponse()
            answer.read()
            if answer.status != 200:
                failures.append(answer.status)
        connection.close()

    threads = [threading.Thread(target=send, args=(bodies[i::clients],)) for i in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    if failures:
        raise SystemExit(f"ingest: {len(failures)} notifications refused ({failures[:3]})")
    return len(bodies) / elapsed


def wrk(url, body=None):
    environment = dict(os.environ, BODY=str(body)) if body else None
    script = ["-s", str(ROOT / "bench" / "wrk_post.lua")] if body else []
    out = subprocess.run(["wrk", "-t2", "-c64", f"-d{SECONDS}s", "-H", f"Authorization: Bearer {READ_TOKEN}", *script, url],
                         capture_output=True, text=True,
                         env=environment, check=True).stdout
    errors = int((re.search(r"Non-2xx or 3xx responses: (\d+)", out) or [0, 0])[1])
    errors += sum(map(int, re.findall(r"(?:connect|read|write|timeout) (\d+)", out)))
    return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)), errors


def row(name, location, bodies, anchors, original, directory):
    process, port = start(location, anchors)
    try:
        rate = ingest(port, bodies)
        base = f"http://127.0.0.1:{port}"
        reads = {"subscription_read": wrk(f"{base}/v1/subscriptions/{original}"),
                 "verify_receipt_merged": wrk(f"{base}/sandbox/verifyReceipt", directory / "store-verify-body.json")}
        empty, _ = wrk(f"{base}/healthz")
    finally:
        process.terminate()
        process.wait(30)
    flags = [flag for anchor in anchors for flag in ("--anchor", str(anchor))]
    inprocess = json.loads(subprocess.run([CLI, "bench-store", "--store", str(location), "--subscription", original,
                                           "--verify-receipt-body", str(directory / "store-verify-body.json"), *flags],
                                          capture_output=True, text=True, check=True).stdout)
    print(f"{name}: ingested {rate:,.0f} notifications/s ({len(bodies)} distinct, 8 clients; assumed Apple peak for "
          f"1,000,000 subscribers: {APPLE_PEAK:,.1f}/s, so {rate / APPLE_PEAK:,.0f}x headroom)")
    for key, label in (("subscription_read", "GET /v1/subscriptions/{id}"), ("verify_receipt_merged", "POST /verifyReceipt merged")):
        http_rate, errors = reads[key]
        work = 1e9 / inprocess[key]  # already over every core (16 at a time)
        floor = 1 / (1 / empty + 1 / work)
        ratio = http_rate / floor
        print(f"  {label}: {http_rate:,.0f} req/s ({errors} errors); floor: empty GET /healthz {empty:,.0f} req/s + "
              f"in-process {work:,.0f}/s (16 at a time, {CORES} cores) = {floor:,.0f} req/s; HTTP / floor = {ratio:.2f} "
              f"(target >= 0.85): {'met' if ratio >= 0.85 else 'NOT met'}")


def main():
    directory = pathlib.Path(sys.argv[1])
    directory.mkdir(parents=True, exist_ok=True)
    bodies, anchors, original = mint_inputs(directory)
    print(f"assumed Apple peak: 1,000,000 subscribers / 30 days x 2 notifications per renewal, a day's within one hour "
          f"= {APPLE_PEAK:,.1f} notifications/s")
    with tempfile.TemporaryDirectory() as scratch:
        row("SQLite", pathlib.Path(scratch) / "bench.db", bodies, anchors, original, directory)
    if postgres_cluster.server_binaries() is None:
        print("PostgreSQL: not installed (scripts/install-deps.sh test installs it): row skipped")
        return
    with postgres_cluster.cluster() as url:
        row("PostgreSQL", url, bodies, anchors, original, directory)


if __name__ == "__main__":
    main()
