"""The HTTP API described: `receipt serve` serves its OpenAPI document (the committed
Server/Sources/ReceiptServer/Endpoints/openapi.json, byte for byte) at /openapi.json, and
schemathesis, fuzzing every documented operation of a live server holding a minted store (two
subscriptions, a consent withdrawn, refund consumption requests, one answered), finds no 5xx and
no answer the document does not describe: status, content type, headers and body, each
operation sent the credential its security scheme names. That the document and the route table
name the same routes and methods is a Swift test (OpenAPIDocumentTests)."""

import json
import os
import re
import pathlib
import subprocess
import sys

import pytest

from test_serve import READ_TOKEN, WRITE_TOKEN, Server, families_with_help
from test_notifications import mint_jws, news_ca, now, post  # noqa: F401 (fixtures)

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCUMENT = ROOT / "Server" / "Sources" / "ReceiptServer" / "Endpoints" / "openapi.json"
METRICS_TOKEN = "test-metrics-token-5d0c2b7a"
BUNDLE = "com.example.minted"

# Each security scheme its own credential; the checks a route's protocol answers otherwise by
# design, operation by operation, each with its reason.
SCHEMATHESIS_CONFIG = f"""
[auth.openapi.readToken]
bearer = "{READ_TOKEN}"
[auth.openapi.writeToken]
bearer = "{WRITE_TOKEN}"
[auth.openapi.metricsToken]
bearer = "{METRICS_TOKEN}"
[auth.openapi.pageBasic]
username = "support"
password = "{READ_TOKEN}"

# Apple's verifyReceipt protocol answers any method and any body with HTTP 200, its status in the JSON.
[[operations]]
include-path = ["/verifyReceipt", "/sandbox/verifyReceipt"]
checks.negative_data_rejection.enabled = false
checks.unsupported_method.enabled = false

# Schema-valid yet refused by design: a JWS or receipt needs a real signature; `from` must come
# before `to` and span at most 1000 intervals (a rule between parameters OpenAPI cannot state);
# a consumption answer is taken only for a transaction the App Store asked about (404 otherwise); a
# list of subscriptions takes `status`, `began`, `bought`, `refunds`, `retained`, `paying`, `paid`,
# `active` or `mrr` (one of them; `status=active` may stand beside `active` or `mrr`), `churned` only
# with status=expired, `from` and `to` only with `churned` or a list of periods, and `at` with `active`
# only at a midnight.
[[operations]]
include-path-regex = "^/(v1/verify|notifications/v2|retention/realtime|v1/stats/.*|dashboard|dashboard/csv/.*|v1/consumption/.*|v1/subscriptions|dashboard/subscriptions)$"
checks.positive_data_acceptance.enabled = false
"""


def test_the_document_is_served_as_committed(tmp_path, news_ca):
    server = Server("--anchor", news_ca[0] / "root.pem", "--bundle-id", BUNDLE, "--environment", "sandbox")
    try:
        status, body, response = server.request("GET", "/openapi.json", token=None)
        assert status == 200 and response.getheader("Content-Type") == "application/json"
        assert body == DOCUMENT.read_bytes()
        assert json.loads(body)["openapi"] == "3.1.0"
    finally:
        server.stop()


def feed(server, mint_jws, chains, now):
    """What the fuzzed server holds: two subscriptions, a consent withdrawn, two refund
    consumption requests (one answered)."""
    def notify(body):
        status, answer = post(server, body)
        assert status == 200, answer

    for original, token, at in (("2000000000000001", "7e3fb20b-4cdb-47cc-936d-99d65f608138", now),
                                ("3000000000000002", "11111111-2222-4333-8444-555555555555", now - 40 * 86_400_000)):
        for _, notification in mint_jws.notification_story(original, token, now=at):
            notify(mint_jws.sign_notification(notification, chains))
    app_transaction = {"appAppleId": 1234567890, "bundleId": BUNDLE, "applicationVersion": "1",
                       "originalApplicationVersion": "1", "originalPurchaseDate": now - 86_400_000,
                       "receiptType": "Sandbox", "receiptCreationDate": now - 86_400_000, "requestDate": now,
                       "signedDate": now, "appTransactionId": "704289572311", "originalPlatform": "iOS"}
    rescission = {"notificationType": "RESCIND_CONSENT", "notificationUUID": "9a1c2d3e-0000-4000-8000-000000000001",
                  "version": "2.0", "signedDate": now,
                  "appData": {"appAppleId": 1234567890, "bundleId": BUNDLE, "environment": "Sandbox",
                              "signedAppTransactionInfo": mint_jws.sign(app_transaction, chains)}}
    notify(json.dumps({"signedPayload": mint_jws.sign(rescission, chains)}))
    for transaction_id in ("7100000000000001", "7100000000000002"):
        transaction = {"transactionId": transaction_id, "originalTransactionId": transaction_id, "bundleId": BUNDLE,
                       "productId": "com.example.coins", "purchaseDate": now - 86_400_000,
                       "originalPurchaseDate": now - 86_400_000, "quantity": 1, "type": "Consumable",
                       "inAppOwnershipType": "PURCHASED", "signedDate": now, "environment": "Sandbox",
                       "transactionReason": "PURCHASE", "storefront": "USA", "storefrontId": "143441", "price": 990,
                       "currency": "USD"}
        request = {"notificationType": "CONSUMPTION_REQUEST", "notificationUUID": f"c0c0a000-0000-4000-8000-{transaction_id[-12:]}",
                   "version": "2.0", "signedDate": now,
                   "data": {"appAppleId": 1234567890, "bundleId": BUNDLE, "environment": "Sandbox",
                            "signedTransactionInfo": transaction, "consumptionRequestReason": "UNINTENDED_PURCHASE"}}
        notify(mint_jws.sign_notification(request, chains))
    answer = {"customerConsented": True, "sampleContentProvided": False, "deliveryStatus": "DELIVERED"}
    status, data, _ = server.request("POST", "/v1/consumption/7100000000000002", json.dumps(answer).encode(),
                                     headers={"Content-Type": "application/json", "Authorization": f"Bearer {WRITE_TOKEN}"})
    assert status == 202, data


def test_schemathesis_finds_no_5xx_and_no_answer_outside_the_document(tmp_path, mint_jws, news_ca, test_ca, now):
    schemathesis = pathlib.Path(sys.executable).parent / "schemathesis"
    if not schemathesis.exists():
        pytest.skip("schemathesis is not installed in this venv (make venv installs it)")
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"default": {"message": {"messageIdentifier": "00000000-0000-0000-0000-000000000001"}}}))
    secret = tmp_path / "webhook.secret"
    secret.write_text("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n")
    secret.chmod(0o600)
    server = Server("--store", tmp_path / "store.db", "--anchor", news_ca[0] / "root.pem", "--anchor", test_ca / "root.pem",
                    "--bundle-id", BUNDLE, "--environment", "sandbox", "--app-apple-id", "1234567890",
                    "--retention-rules", rules, "--max-body", "65536",
                    "--webhook", "http://127.0.0.1:9/hooks", "--webhook-secret-file", secret,
                    env={"RECEIPT_METRICS_TOKEN": METRICS_TOKEN})
    try:
        feed(server, mint_jws, news_ca[1], now)
        config = tmp_path / "schemathesis.toml"
        config.write_text(SCHEMATHESIS_CONFIG)
        runs = []
        # Every phase in both modes but fuzzing, which runs on valid data only: its invalid
        # credentials would have the address throttled (429, documented) for the rest of the run.
        # ignored_auth is test_serve_security's, for the same reason. Seeded: a failure reproduces.
        # One worker: hypothesis parses source with `ast` as it describes a case, and CPython 3.11
        # can fail that parse when two threads do it at once ("AST constructor recursion depth
        # mismatch", as in gh-106905), which a run of two workers did here on 3.11.7.
        for phases, mode in (("examples,coverage,stateful", "all"), ("fuzzing", "positive")):
            runs.append(subprocess.run([str(schemathesis), "--config-file", str(config), "run", str(DOCUMENT),
                                        "--url", f"http://127.0.0.1:{server.port}", "--phases", phases, "--mode", mode,
                                        "--exclude-checks", "ignored_auth", "--max-examples", "25", "--seed", "20261205",
                                        "--workers", "1", "--no-color"],
                                       capture_output=True, text=True, timeout=900, cwd=tmp_path))
        # The families a store, webhooks and the fuzzing made, each with its HELP line.
        families = families_with_help(server.request("GET", "/metrics", token=METRICS_TOKEN)[1].decode())
        assert {"receipt_webhook_queue_depth", "receipt_notifications_total", "receipt_store_quick_reads_total"} <= set(families)
    finally:
        assert server.stop() == 0
    operations = sum(method in ("get", "head", "post", "put", "delete", "patch")
                     for item in json.loads(DOCUMENT.read_text())["paths"].values() for method in item)
    for run in runs:
        report = run.stdout[-6000:] + run.stderr[-2000:]
        assert run.returncode == 0, report
        assert re.search(r"Tested: (\d+)", run.stdout) and int(re.search(r"Tested: (\d+)", run.stdout)[1]) == operations, report
        assert "Rate limited" not in run.stdout, report
