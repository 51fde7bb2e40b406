"""Events and webhooks (#31): every change `receipt serve` accepts becomes one event, written
in the change's transaction, and is delivered to each --webhook signed as the Standard
Webhooks specification says, per subscription in order, retried until the receiver takes it.
The receiver is started here on loopback and checks every signature twice: with libreceipt's
receipt_webhook_verify, and with Python's hmac as the specification writes it."""
import base64
import hashlib
import hmac
import http.server
import itertools
import json
import os
import random
import re
import signal
import subprocess
import threading
import time

import pytest

from libreceipt import ReceiptError, webhook
from test_notifications import (ORIGINAL, TOKEN, mint_jws, new_store, news_ca, now, post,  # noqa: F401 (fixtures)
                                postgres, store_server, story, table)
from test_serve import CLI, READ_TOKEN, WRITE_TOKEN, Server

SECRET = "whsec_" + base64.b64encode(bytes(range(32))).decode()

#: Apple's notification type and subtype -> the event type README documents (the reference the server must match).
EVENT_TYPES = {("SUBSCRIBED", "INITIAL_BUY"): "subscription.started", ("DID_RENEW", None): "subscription.renewed",
               ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED"): "subscription.auto_renew_disabled",
               ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED"): "subscription.auto_renew_enabled",
               ("REFUND", None): "purchase.refunded",
               ("DID_FAIL_TO_RENEW", "GRACE_PERIOD"): "subscription.grace_period_started"}


def reference_signature(secret, message_id, timestamp, body):
    """The specification's signature, computed here without libreceipt."""
    key = base64.b64decode(secret[len("whsec_"):])
    digest = hmac.new(key, f"{message_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


class Receiver:
    """A webhook receiver on loopback. `behaviour(count)` -> an HTTP status to answer, a
    (status, body bytes) pair, or "hang" (answer nothing for 30 s); every request is kept,
    with whether it verified."""

    def __init__(self, behaviour=lambda count: 200, secret=SECRET, verify=True):
        self.requests, self.lock, self.secret, self.behaviour = [], threading.Lock(), secret, behaviour
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as receivers serve

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                arrived = time.time()
                headers = {key.lower(): value for key, value in self.headers.items()}
                verified = reference = None
                if verify:
                    try:
                        webhook.verify(receiver.secret, headers, body)
                        verified = True
                    except ReceiptError:
                        verified = False
                    reference = reference_signature(receiver.secret, headers.get("webhook-id", ""),
                                                    headers.get("webhook-timestamp", ""), body) \
                        in headers.get("webhook-signature", "").split()
                with receiver.lock:
                    number = len(receiver.requests)
                    answer = receiver.behaviour(number)
                    receiver.requests.append({"headers": headers, "body": body, "verified": verified,
                                              "reference": reference, "answer": answer, "arrived": arrived})
                if answer == "hang":
                    time.sleep(30)
                    return
                status, payload = answer if isinstance(answer, tuple) else (answer, b"")
                self.send_response(status)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        class Server(http.server.ThreadingHTTPServer):
            request_queue_size = 128  # the default listen backlog, 5, drops connections a server opens at once

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def delivered(self):
        """The events taken (2xx), first delivery of each, in arrival order."""
        with self.lock:
            seen, events = set(), []
            for request in self.requests:
                status = request["answer"][0] if isinstance(request["answer"], tuple) else request["answer"]
                if isinstance(status, int) and 200 <= status < 300:
                    event = json.loads(request["body"])
                    if event["data"]["event_id"] not in seen:
                        seen.add(event["data"]["event_id"])
                        events.append(event)
            return events

    def wait_for(self, count, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if len(self.delivered()) >= count:
                return self.delivered()
            time.sleep(0.05)
        raise AssertionError(f"{len(self.delivered())} of {count} events arrived within {timeout} s")

    def close(self):
        self.server.shutdown()


@pytest.fixture
def secret_file(tmp_path):
    path = tmp_path / "webhook.secret"
    path.write_text(SECRET + "\n")
    path.chmod(0o600)
    return path


def webhook_server(tmp_path, news_ca, test_ca, receiver, secret_file, *flags, store=None):
    return store_server(tmp_path, news_ca, test_ca, "--webhook", receiver.url, "--webhook-secret-file", secret_file,
                        "--webhook-initial-backoff-ms", "50", *flags, store=store)


def reference_events(bodies):
    """The events a reference derivation gives for notifications in the order they were
    accepted: one per notification UUID new to the store, whatever its rows change."""
    seen, events = set(), []
    for body in bodies:
        payload = json.loads(base64.urlsafe_b64decode(json.loads(body)["signedPayload"].split(".")[1] + "=="))
        if payload["notificationUUID"] in seen:
            continue
        seen.add(payload["notificationUUID"])
        events.append((payload["notificationUUID"], EVENT_TYPES[(payload["notificationType"], payload.get("subtype"))]))
    return events


def test_events_equal_a_reference_derivation_in_order_and_verify(tmp_path, news_ca, test_ca, story, secret_file, new_store):
    """Shuffled and duplicated notifications: the events delivered are, in order, those the
    reference gives; each carries the signed notification, the state and the entitlements after it."""
    receiver = Receiver()
    location = new_store()
    server = webhook_server(tmp_path, news_ca, test_ca, receiver, secret_file, store=location)
    try:
        bodies = [body for _, _, body in story] * 2
        random.Random(31).shuffle(bodies)
        for body in bodies:
            assert post(server, body)[0] == 200
        expected = reference_events(bodies)
        assert len(expected) == len(story)  # older news too: each notification is news to the app
        delivered = receiver.wait_for(len(expected))
        time.sleep(0.5)
        assert len(receiver.delivered()) == len(expected)
        assert [(event["data"]["notification_uuid"], event["type"]) for event in delivered] == expected
        assert all(request["verified"] and request["reference"] for request in receiver.requests)
        last = delivered[-1]["data"]
        assert last["original_transaction_id"] == ORIGINAL and last["app_account_token"] == TOKEN
        assert last["environment"] == "Sandbox" and last["source"] == "notification"
        assert last["signed_payload"].count(".") == 2 and last["state"]["originalTransactionId"] == ORIGINAL
        assert last["entitlements_of"] == "app_account_token"
        # The state the event carries is the store's after the change: the last one equals a read now.
        status, now_state = server.json("GET", f"/v1/subscriptions/{ORIGINAL}")
        assert status == 200 and last["state"]["status_name"] == now_state["status_name"]
        listed = json.loads(subprocess.run([CLI, "events", "list", "--store", str(location)], check=True,
                                           capture_output=True, text=True).stdout)["events"]
        assert [event["id"] for event in listed][::-1] == [event["data"]["event_id"] for event in delivered]
        assert all(event["delivered"] == 1 and event["pending"] == 0 for event in listed)
    finally:
        server.stop()
        receiver.close()


def test_a_receiver_answering_500_429_then_hanging_gets_everything_in_order(tmp_path, news_ca, test_ca, story,
                                                                          secret_file, new_store):
    """500s, then 429s, then a receiver that hangs past the timeout: once it answers 200,
    every event arrives, none out of order, each retried delivery signed afresh."""
    def behaviour(count):
        return 500 if count < 3 else 429 if count < 5 else "hang" if count < 6 else 200
    receiver = Receiver(behaviour)
    server = webhook_server(tmp_path, news_ca, test_ca, receiver, secret_file, "--webhook-timeout", "1", store=new_store())
    try:
        for _, _, body in story:
            assert post(server, body)[0] == 200
        delivered = receiver.wait_for(len(story), timeout=90)
        assert [event["data"]["notification_uuid"] for event in delivered] == [
            json.loads(base64.urlsafe_b64decode(json.loads(body)["signedPayload"].split(".")[1] + "=="))["notificationUUID"]
            for _, _, body in story]
        assert [request["answer"] for request in receiver.requests[:6]] == [500, 500, 500, 429, 429, "hang"]
        assert all(request["verified"] for request in receiver.requests)
        status, metrics, _ = server.request("GET", "/metrics")
        text = metrics.decode()
        outcomes = dict(re.findall(r'^receipt_webhook_deliveries_total\{outcome="(\w+)"\} (\d+)$', text, re.M))
        assert outcomes.get("http_5xx") == "3" and outcomes.get("timeout") == "1", outcomes
        assert "receipt_webhook_queue_depth" in text and "receipt_webhook_delivery_latency_seconds_bucket" in text
    finally:
        server.stop()
        receiver.close()


def test_a_4xx_parks_the_delivery_and_replay_sends_it_again(tmp_path, news_ca, test_ca, story, secret_file, new_store):
    """A receiver that refuses (404) parks the event as failed at once; `receipt events show`
    says why; replay (CLI and endpoint) makes it pending, and it arrives."""
    answers = {"status": 404}
    receiver = Receiver(lambda count: answers["status"])
    location = new_store()
    server = webhook_server(tmp_path, news_ca, test_ca, receiver, secret_file, store=location)
    try:
        assert post(server, story[0][2])[0] == 200
        deadline = time.time() + 20
        while time.time() < deadline and not server.json("GET", "/v1/events?state=failed")[1]["events"]:
            time.sleep(0.05)
        failed = json.loads(subprocess.run([CLI, "events", "list", "--store", location, "--state", "failed"],
                                           check=True, capture_output=True, text=True).stdout)["events"]
        assert len(failed) == 1 and failed[0]["failed"] == 1 and failed[0]["type"] == "subscription.started"
        shown = json.loads(subprocess.run([CLI, "events", "show", "--store", location, failed[0]["id"]], check=True,
                                          capture_output=True, text=True).stdout)
        assert shown["deliveries"][0]["state"] == "failed" and "HTTP 404" in shown["deliveries"][0]["last_outcome"]
        assert shown["body"]["data"]["event_id"] == failed[0]["id"]
        # Replay needs the token; then the receiver, mended, takes it.
        assert server.request("POST", f"/v1/events/{failed[0]['id']}/replay")[0] == 401
        answers["status"] = 204
        read = {"Authorization": f"Bearer {READ_TOKEN}"}
        assert server.request("POST", f"/v1/events/{failed[0]['id']}/replay", headers=read)[0] == 403  # never the read token
        status, data, _ = server.request("POST", f"/v1/events/{failed[0]['id']}/replay",
                                         headers={"Authorization": f"Bearer {WRITE_TOKEN}"})
        assert status == 200 and json.loads(data) == {"replayed_deliveries": 1}
        assert receiver.wait_for(1)[0]["data"]["event_id"] == failed[0]["id"]
        # The worker marks the delivery once the receiver's answer is back: a moment after the receiver has it.
        deadline = time.time() + 10
        while True:
            status, answer = server.json("GET", f"/v1/events/{failed[0]['id']}")
            if answer["deliveries"][0]["state"] == "delivered" or time.time() > deadline:
                break
            time.sleep(0.05)
        assert status == 200 and answer["deliveries"][0]["state"] == "delivered"
        assert server.json("GET", "/v1/events", token=None)[0] == 401
        assert server.json("GET", "/v1/events?state=nonsense")[0] == 400
        assert server.json("GET", "/v1/events/evt_" + "0" * 32)[0] == 404
        result = subprocess.run([CLI, "events", "show", "--store", location, "evt_" + "0" * 32], capture_output=True, text=True)
        assert result.returncode == 1 and "no event" in result.stderr
    finally:
        server.stop()
        receiver.close()


def test_events_older_than_the_retention_are_pruned_but_pending_deliveries_kept(tmp_path, news_ca, test_ca, story,
                                                                               secret_file, new_store):
    """`receipt events prune` and the server (at start) delete the events past the retention,
    a parked failure with them, never one whose delivery is still pending; newer events stay."""
    receiver = Receiver()
    location = new_store()
    server = webhook_server(tmp_path, news_ca, test_ca, receiver, secret_file, store=location)
    try:
        for _, _, body in story:
            assert post(server, body)[0] == 200
        total = len(receiver.wait_for(len(story)))
    finally:
        server.stop()
        receiver.close()
    assert total >= 3 and int(table(location, "SELECT count(*) FROM events")[0][0]) == total
    day = 86_400_000
    table(location, f"UPDATE events SET created_at = created_at - {40 * day}")
    first, second = [int(row[0]) for row in table(location, "SELECT sequence FROM events ORDER BY sequence LIMIT 2")]
    table(location, f"UPDATE deliveries SET state = 'pending' WHERE event_sequence = {first}")
    table(location, f"UPDATE deliveries SET state = 'failed' WHERE event_sequence = {second}")

    def prune(*flags):
        result = subprocess.run([CLI, "events", "prune", "--store", str(location), *flags], capture_output=True, text=True)
        return result.returncode, result.stdout, result.stderr

    assert prune("--older-than-days", "0")[0] == 2
    assert json.loads(prune("--older-than-days", "41")[1]) == {"pruned_events": 0}
    assert json.loads(prune("--older-than-days", "39")[1]) == {"pruned_events": total - 1}
    assert table(location, "SELECT sequence FROM events") == [(str(first),)]
    assert table(location, "SELECT state FROM deliveries") == [("pending",)]

    # The server prunes at start: the pending delivery, once delivered, goes with its event;
    # with --event-retention-days 0 nothing is pruned.
    table(location, f"UPDATE deliveries SET state = 'delivered' WHERE event_sequence = {first}")
    server = store_server(tmp_path, news_ca, test_ca, "--event-retention-days", "0", store=location)
    server.stop()
    assert table(location, "SELECT count(*) FROM events") == [("1",)]
    server = store_server(tmp_path, news_ca, test_ca, "--event-retention-days", "39", store=location)
    try:
        deadline = time.time() + 20
        while time.time() < deadline and table(location, "SELECT count(*) FROM events") != [("0",)]:
            time.sleep(0.05)
        assert table(location, "SELECT count(*) FROM events") == [("0",)]
        assert table(location, "SELECT count(*) FROM deliveries") == [("0",)]
    finally:
        server.stop()


def test_sigkill_mid_delivery_loses_no_event(tmp_path, news_ca, test_ca, mint_jws, now, secret_file, new_store):
    """The server is killed while a slow receiver is being sent events; restarted on the same
    store, every event of every acknowledged notification arrives."""
    _, chains = news_ca
    bodies = []
    for subscription in range(6):
        original = str(3100000000000001 + subscription * 1000)
        bodies += [mint_jws.sign_notification(payload, chains)
                   for _, payload in mint_jws.notification_story(original, TOKEN, now=now)[:3]]
    slow = {"delay": 0.3}

    def behaviour(count):
        time.sleep(slow["delay"])
        return 200
    receiver = Receiver(behaviour)
    location = new_store()
    # The lease is twice the timeout plus 5 s: 7 s here.
    timeout = ("--webhook-timeout", "1")
    server = webhook_server(tmp_path, news_ca, test_ca, receiver, secret_file, *timeout, store=location)
    for body in bodies:
        assert post(server, body)[0] == 200
    while not receiver.requests:
        time.sleep(0.01)
    server.process.send_signal(signal.SIGKILL)
    server.process.wait(10)
    assert len(receiver.delivered()) < len(bodies)
    slow["delay"] = 0
    # The restarted server must not wait for events the killed one never claimed, and takes the
    # claimed ones when their lease ends.
    server = webhook_server(tmp_path, news_ca, test_ca, receiver, secret_file, *timeout, store=location)
    try:
        delivered = receiver.wait_for(len(bodies), timeout=120)
        assert len({event["data"]["event_id"] for event in delivered}) == len(bodies)
        by_subscription = {}
        for event in delivered:
            by_subscription.setdefault(event["data"]["original_transaction_id"], []).append(event["data"]["created_at_ms"])
        assert all(times == sorted(times) for times in by_subscription.values())
    finally:
        server.stop()
        receiver.close()


def test_two_servers_on_one_postgresql_database_share_the_deliveries(tmp_path, news_ca, test_ca, mint_jws, now,
                                                                   secret_file, postgres):
    """Notifications spread over two servers with the same webhook: each event is delivered
    once (row leases, SKIP LOCKED), per subscription in order."""
    location = postgres.rsplit("/", 1)[0] + "/webhooks_by_two"
    subprocess.run(["psql", postgres, "-q", "-c", "CREATE DATABASE webhooks_by_two"], check=True)
    _, chains = news_ca
    bodies = []
    for subscription in range(8):
        original = str(3200000000000001 + subscription * 1000)
        bodies += [mint_jws.sign_notification(payload, chains)
                   for _, payload in mint_jws.notification_story(original, TOKEN, now=now)]
    receiver = Receiver()
    first, second = (webhook_server(tmp_path, news_ca, test_ca, receiver, secret_file, store=location) for _ in range(2))
    try:
        threads = [threading.Thread(target=lambda server, part: [post(server, body) for body in part],
                                    args=(server, bodies[index::2])) for index, server in enumerate((first, second))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        # Notifications of one subscription raced over two servers: an event for each.
        made = table(location, "SELECT event_id, ordering_key FROM events ORDER BY sequence")
        assert len(made) == len(bodies)
        delivered = receiver.wait_for(len(made), timeout=120)
        time.sleep(1)
        with receiver.lock:
            ids = [json.loads(request["body"])["data"]["event_id"] for request in receiver.requests]
        assert len(ids) == len(set(ids)) == len(made)  # no double delivery in normal operation
        assert set(ids) == {event_id for event_id, _ in made}
        for key in {key for _, key in made}:  # per subscription, in the order the events were made
            assert [event["data"]["event_id"] for event in delivered if event["data"]["original_transaction_id"] == key] \
                == [event_id for event_id, made_key in made if made_key == key]
    finally:
        first.stop()
        second.stop()
        receiver.close()


@pytest.mark.parametrize("flags, says", [
    (["--webhook", "http://example.com/hooks", "--webhook-secret-file", "SECRET"], "must be https"),
    (["--webhook", "https://user:pw@example.com/", "--webhook-secret-file", "SECRET"], "no user name or password"),
    (["--webhook", "https://example.com/hooks"], "needs its --webhook-secret-file"),
    (["--webhook", "https://example.com/hooks", "--webhook-secret-file", "BAD"], "whsec_"),
])
def test_webhook_options_are_checked_at_start(tmp_path, news_ca, test_ca, secret_file, flags, says):
    bad = tmp_path / "bad.secret"
    bad.write_text("not-a-secret\n")
    bad.chmod(0o600)
    flags = [str(secret_file) if flag == "SECRET" else str(bad) if flag == "BAD" else flag for flag in flags]
    result = subprocess.run([CLI, "serve", "--port", "0", "--store", tmp_path / "s.db", "--bundle-id", "com.example.minted",
                             "--environment", "sandbox", "--anchor", news_ca[0] / "root.pem", *flags],
                            capture_output=True, text=True, timeout=30, env=dict(os.environ, RECEIPT_READ_TOKEN=READ_TOKEN))
    assert result.returncode == 2 and says in result.stderr, result.stderr


def test_the_signature_check_refuses_what_it_should():
    """libreceipt's check against the specification's own example, and each way a message can be wrong."""
    # The Standard Webhooks specification's example (its reference libraries' test vector).
    secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    body = b'{"test": 2432232314}'
    headers = {"webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek", "webhook-timestamp": "1614265330",
               "webhook-signature": reference_signature(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", body)}
    assert headers["webhook-signature"] == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
    assert webhook.verify(secret, headers, body, now=1614265330) == "msg_p5jXN8AQM9LWM0D4loKWxJek"
    # Another signature beside it (a secret being rotated) still passes.
    assert webhook.verify(secret, dict(headers, **{"webhook-signature": "v1,AAAA " + headers["webhook-signature"]}), body,
                          now=1614265330)
    cases = [
        (secret, headers, body + b" ", 1614265330, "RECEIPT_E_SIGNATURE_INVALID"),
        (secret, dict(headers, **{"webhook-id": "msg_other"}), body, 1614265330, "RECEIPT_E_SIGNATURE_INVALID"),
        (secret, headers, body, 1614265330 + 301, "RECEIPT_E_SIGNATURE_INVALID"),
        (secret, headers, body, 1614265330 - 301, "RECEIPT_E_SIGNATURE_INVALID"),
        ("whsec_" + base64.b64encode(b"x" * 24).decode(), headers, body, 1614265330, "RECEIPT_E_SIGNATURE_INVALID"),
        (secret, dict(headers, **{"webhook-signature": "v2,abc"}), body, 1614265330, "RECEIPT_E_BAD_FIELD"),
        (secret, dict(headers, **{"webhook-timestamp": "yesterday"}), body, 1614265330, "RECEIPT_E_BAD_FIELD"),
        (secret, dict(headers, **{"webhook-signature": " ".join(["v1,x"] * 17)}), body, 1614265330, "RECEIPT_E_BAD_FIELD"),
        ("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", headers, body, 1614265330, "RECEIPT_E_INVALID_ARGUMENT"),
        ("whsec_c2hvcnQ=", headers, body, 1614265330, "RECEIPT_E_INVALID_ARGUMENT"),
    ]
    for case_secret, case_headers, case_body, case_now, name in cases:
        with pytest.raises(ReceiptError) as raised:
            webhook.verify(case_secret, case_headers, case_body, now=case_now)
        assert raised.value.name == name, (case_headers, raised.value)


# ------------------------------------------------- CONSUMPTION_REQUEST: answers sent to Apple

from test_notifications import API_BUNDLE_ID, api_flags, api_mock  # noqa: E402,F401 (fixture)

FAILING_ONCE = "9000000000000500"  # the mock answers its first call 500 (again after requests.reset())
TRANSACTIONS = itertools.count()  # the module's mock remembers every transaction id it was sent


def consumption_request(mint_jws, news_ca, transaction_id, signed, product="com.example.coins"):
    transaction = {"transactionId": transaction_id, "originalTransactionId": transaction_id, "bundleId": API_BUNDLE_ID,
                   "productId": product, "purchaseDate": signed - 86_400_000, "originalPurchaseDate": signed - 86_400_000,
                   "quantity": 1, "type": "Consumable", "inAppOwnershipType": "PURCHASED", "signedDate": signed,
                   "environment": "Sandbox", "transactionReason": "PURCHASE", "storefront": "USA", "storefrontId": "143441",
                   "price": 990, "currency": "USD"}
    notification = {"notificationType": "CONSUMPTION_REQUEST", "notificationUUID": f"c0c0a000-0000-4000-8000-{transaction_id[-12:]}",
                    "version": "2.0", "signedDate": signed,
                    "data": {"bundleId": API_BUNDLE_ID, "environment": "Sandbox", "signedTransactionInfo": transaction,
                             "consumptionRequestReason": "UNINTENDED_PURCHASE"}}
    return mint_jws.sign_notification(notification, news_ca[1])


def consumption_server(api_mock, news_ca, store, *flags):
    return Server("--store", store, *api_flags(api_mock), "--anchor", news_ca[0] / "root.pem", *flags)


def wait_for_state(server, transaction_id, state, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        status, answer = server.json("GET", f"/v1/consumption/{transaction_id}")
        if status == 200 and answer["state"] == state:
            return answer
        time.sleep(0.1)
    raise AssertionError(f"{transaction_id} did not become {state}: {answer}")


def sent_to_apple(requests, transaction_id):
    return [request["body"] for request in requests()
            if request["method"] == "PUT" and request["path"] == f"/inApps/v2/transactions/consumption/{transaction_id}"]


def test_the_apps_answer_is_sent_to_apple(tmp_path, api_mock, news_ca, mint_jws, now, secret_file, new_store):
    """A CONSUMPTION_REQUEST waits for the app; its answer (Apple's V2 members, checked) is sent
    with the API key; the event says where to answer."""
    requests = api_mock[3]
    receiver = Receiver()
    server = consumption_server(api_mock, news_ca, new_store(), "--webhook", receiver.url,
                                "--webhook-secret-file", secret_file)
    transaction_id = str(7100000000000001 + next(TRANSACTIONS))
    try:
        assert post(server, consumption_request(mint_jws, news_ca, transaction_id, now))[0] == 200
        event = receiver.wait_for(1)[0]
        assert event["type"] == "purchase.consumption_requested"
        assert event["data"]["answer_path"] == f"/v1/consumption/{transaction_id}"
        assert wait_for_state(server, transaction_id, "awaiting")["deadline_ms"] == now + 12 * 3_600_000
        answer = {"customerConsented": True, "sampleContentProvided": False, "deliveryStatus": "DELIVERED",
                  "consumptionPercentage": 25000, "refundPreference": "GRANT_PRORATED"}
        path = f"/v1/consumption/{transaction_id}"
        assert server.request("POST", path, json.dumps(answer))[0] == 401  # a write takes the token
        assert server.request("POST", path, json.dumps(answer), headers={"Authorization": f"Bearer {READ_TOKEN}"})[0] == 403
        token = {"Authorization": f"Bearer {WRITE_TOKEN}"}
        status, data, _ = server.request("POST", path, json.dumps(dict(answer, deliveryStatus="LOST")), headers=token)
        assert status == 400 and "deliveryStatus" in json.loads(data)["detail"]
        status, data, _ = server.request("POST", path, json.dumps({"customerConsented": True}), headers=token)
        assert status == 400 and "required" in json.loads(data)["detail"]
        assert sent_to_apple(requests, transaction_id) == []  # nothing without the app's (or a policy's) answer
        status, data, _ = server.request("POST", path, json.dumps(dict(answer, consumptionPercentage=25000.5)), headers=token)
        assert status == 400 and "consumptionPercentage must be an integer" in json.loads(data)["detail"]
        # A whole number written as a float (as JSON serializers may) is that integer, sent to Apple as one.
        status, data, _ = server.request("POST", path, json.dumps(dict(answer, consumptionPercentage=25000.0)), headers=token)
        assert status == 202 and json.loads(data)["state"] == "pending"
        shown = wait_for_state(server, transaction_id, "sent")
        assert shown["source"] == "app" and shown["body"] == answer
        assert sent_to_apple(requests, transaction_id) == [answer]
        assert type(sent_to_apple(requests, transaction_id)[0]["consumptionPercentage"]) is int
        status, data, _ = server.request("POST", path, json.dumps(answer), headers=token)
        assert status == 409
    finally:
        server.stop()
        receiver.close()


def test_the_policy_answers_what_the_app_does_not_and_5xx_is_retried(tmp_path, api_mock, news_ca, mint_jws, now, new_store):
    """A policy answer per product (and none for others: those wait for the app); Apple's 500 is
    retried until it takes the answer."""
    requests = api_mock[3]
    policy = {"consentCollected": "the purchase terms, screen 3",
              "products": {"com.example.coins": {"customerConsented": True, "sampleContentProvided": False,
                                                 "deliveryStatus": "DELIVERED", "refundPreference": "DECLINE"}}}
    (tmp_path / "policy.json").write_text(json.dumps(policy))
    requests.reset()  # the mock's first answer for FAILING_ONCE is a 500 again
    earlier = len(sent_to_apple(requests, FAILING_ONCE))  # the other store's run
    server = consumption_server(api_mock, news_ca, new_store(), "--consumption-policy", tmp_path / "policy.json")
    other = str(7100000000000001 + next(TRANSACTIONS))
    try:
        assert post(server, consumption_request(mint_jws, news_ca, FAILING_ONCE, now))[0] == 200
        assert post(server, consumption_request(mint_jws, news_ca, other, now, product="com.example.other"))[0] == 200
        shown = wait_for_state(server, FAILING_ONCE, "sent")
        assert shown["source"] == "policy" and shown["attempts"] >= 1
        assert sent_to_apple(requests, FAILING_ONCE)[earlier:] == [policy["products"]["com.example.coins"]] * 2  # the 500, then taken
        time.sleep(1)
        assert wait_for_state(server, other, "awaiting")["attempts"] == 0
        assert sent_to_apple(requests, other) == []
    finally:
        server.stop()


@pytest.mark.parametrize("policy, says", [
    ({"products": {}}, "consentCollected"),
    ({"consentCollected": "terms", "default": {"customerConsented": True}}, "default."),
    ({"consentCollected": "terms", "extra": 1}, "no member"),
])
def test_a_policy_that_is_not_one_is_refused_at_start(tmp_path, api_mock, news_ca, policy, says):
    (tmp_path / "policy.json").write_text(json.dumps(policy))
    result = subprocess.run([CLI, "serve", "--port", "0", "--store", tmp_path / "s.db", *api_flags(api_mock),
                             "--consumption-policy", tmp_path / "policy.json"], capture_output=True, text=True, timeout=30,
                            env=dict(os.environ, RECEIPT_READ_TOKEN=READ_TOKEN))
    assert result.returncode == 2 and says in result.stderr, result.stderr
