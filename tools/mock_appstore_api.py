#!/usr/bin/env python3
"""A mock App Store Server API on loopback, for tests and for trying a client without Apple.

It checks every bearer token as Apple does (ES256 signature with the in-app purchase key's
public half; header alg/kid/typ; claims iss, aud, bid, exp, and iat when present; at most 60
minutes), and
answers in Apple's documented shapes with transactions, renewal infos, notifications and app
transactions signed by a test CA of tools/mint_jws.py (so a client verifies them with that CA's
root.pem as its anchor, never with Apple's).

    mock_appstore_api.py --ca DIR --key KEY.pem --key-id ID --issuer-id ID --bundle-id ID [--port 0]

KEY.pem is the in-app purchase key the client signs with (its public half checks tokens).
--ca DIR is made with `mint_jws.py ca DIR` when it does not exist yet. The first line on
standard output is "listening on http://127.0.0.1:PORT". With --background the mock prints only
its base URL once it listens, serves from a child process, writes that process's id to
DIR/mock.pid, and returns at once (`kill "$(cat DIR/mock.pid)"` stops it, and so does removing DIR).

The customer: original transaction 2000000000000001 with --transactions renewals (45 by
default), 20 a page. Its 12 notifications of history (5 a page) name --history-names in turn
(the customer alone by default). Transaction ids that script a behaviour, once per server run:
    9000000000000429  first a 429 with Retry-After: 1, then as the customer
    9000000000003600  first a 429 whose Retry-After is Apple's form, an instant in milliseconds
                      since 1970 an hour ahead, then as the customer
    9000000000000500  first a 500 (GENERAL_INTERNAL_RETRYABLE), then as the customer
    9000000000000666  history whose second page holds one tampered transaction
    9000000000004041  always a 404 with ACCOUNT_NOT_FOUND (4040001): about the caller, not the id
    9000000000000777  a customer of its own (as --customers') whose first purchase is dated at the
                      first 64-bit millisecond, which a store refuses
    any other unknown id: 404 with TRANSACTION_ID_NOT_FOUND (4040010)
With --customers N, original transaction ids 3000000000000000 to 3000000000000000 + N - 1 are
customers of their own too (for `receipt import`): each a monthly subscription of two
transactions, answered by the transaction history and subscription status calls, signed afresh
at every answer (as Apple does), none kept in memory.
The Advanced Commerce API's calls (/advancedCommerce/v1/...) answer with the customer's latest
transaction (revoked by revoke_subscription) and, for a subscription, its renewal info.
GET /__requests lists the requests received (method, path, query, JSON body, token claims, the
instant received in seconds), none with --forget-requests;
POST /__reset makes the scripted behaviours happen once more.

Needs Python 3.8+ and the `cryptography` package.
"""
import argparse
import base64
import json
import os
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mint_jws  # noqa: E402

ORIGINAL_ID = "2000000000000001"
RATE_LIMITED, FAILING, TAMPERED = "9000000000000429", "9000000000000500", "9000000000000666"
UNSTORABLE = "9000000000000777"
LIMITED_FOR_AN_HOUR = "9000000000003600"
FIRST_OF_MANY = 3000000000000000
ACCOUNT_GONE = "9000000000004041"
PAGE = 20
NOTIFICATIONS, NOTIFICATION_PAGE = 12, 5
APP_APPLE_ID = 1234567890


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Customer:
    """The transactions, renewal info, notifications and app transaction the mock answers with."""

    def __init__(self, chains, bundle_id, environment, count, history_names=(ORIGINAL_ID,)):
        self.chains, self.bundle_id, self.environment = chains, bundle_id, environment
        self.history_names = list(history_names)
        now = int(time.time() * 1000)
        self.now = now
        self.transactions = []
        for index in range(count):
            purchase = now - (count - index) * 30 * 86_400_000
            self.transactions.append({
                "transactionId": str(2000000000000100 + index), "originalTransactionId": ORIGINAL_ID,
                "bundleId": bundle_id, "productId": "com.example.monthly" if index % 3 else "com.example.yearly",
                "subscriptionGroupIdentifier": "21000000", "purchaseDate": purchase,
                "originalPurchaseDate": now - count * 30 * 86_400_000, "expiresDate": purchase + 30 * 86_400_000,
                "quantity": 1, "type": "Auto-Renewable Subscription", "inAppOwnershipType": "PURCHASED",
                "signedDate": now, "environment": environment, "transactionReason": "RENEWAL" if index else "PURCHASE",
                "storefront": "USA", "storefrontId": "143441", "price": 4990, "currency": "USD",
                "webOrderLineItemId": str(2000000000000900 + index)})
        self.signed = {}
        self.lock = threading.Lock()

    def sign(self, payload, variant=None):
        key = (json.dumps(payload, sort_keys=True), variant)
        with self.lock:
            if key not in self.signed:
                self.signed[key] = mint_jws.sign(payload, self.chains, variant)
            return self.signed[key]

    def renewal_info(self, original=ORIGINAL_ID):
        return {"originalTransactionId": original, "autoRenewProductId": "com.example.monthly",
                "productId": "com.example.monthly", "autoRenewStatus": 1, "signedDate": self.now,
                "environment": self.environment, "renewalDate": self.transactions[-1]["expiresDate"]}

    def notification(self, index):
        # The notification history names the subscriptions of --history-names in turn.
        original = self.history_names[index % len(self.history_names)]
        transaction = dict(self.transactions[index % len(self.transactions)], originalTransactionId=original)
        return {"notificationType": "DID_RENEW", "notificationUUID": f"6f1f4a2e-0000-4000-8000-{index:012d}",
                "version": "2.0", "signedDate": self.now - index * 1000,
                "data": {"appAppleId": APP_APPLE_ID, "bundleId": self.bundle_id, "bundleVersion": "1",
                         "environment": self.environment, "status": 1,
                         "signedTransactionInfo": self.sign(transaction),
                         "signedRenewalInfo": self.sign(self.renewal_info(original))}}

    def one_of_many(self, original, count):
        """Customer `original` of --customers (or UNSTORABLE): (its two transactions, its renewal info), or None."""
        unstorable = original == UNSTORABLE
        if not unstorable and (not original.isdigit() or not 0 <= int(original) - FIRST_OF_MANY < count):
            return None
        number = 0 if unstorable else int(original) - FIRST_OF_MANY
        bought = self.now - 40 * 86_400_000 - number * 1000
        transactions = [{
            "transactionId": str(int(original) + 500_000_000_000 * index), "originalTransactionId": original,
            "bundleId": self.bundle_id, "productId": "com.example.monthly", "subscriptionGroupIdentifier": "21000000",
            "purchaseDate": bought + index * 30 * 86_400_000, "originalPurchaseDate": bought,
            "expiresDate": bought + (index + 1) * 30 * 86_400_000, "quantity": 1, "type": "Auto-Renewable Subscription",
            "inAppOwnershipType": "PURCHASED", "signedDate": int(time.time() * 1000), "environment": self.environment,
            "transactionReason": "RENEWAL" if index else "PURCHASE", "storefront": "USA", "storefrontId": "143441",
            "price": 4990, "currency": "USD", "webOrderLineItemId": str(int(original) + 600_000_000_000 + index)}
            for index in range(2)]
        renewal = dict(self.renewal_info(original), signedDate=int(time.time() * 1000),
                       renewalDate=transactions[-1]["expiresDate"])
        if unstorable:
            transactions[0].update(purchaseDate=-2 ** 63, originalPurchaseDate=-2 ** 63)
        return transactions, renewal

    def app_transaction(self):
        return {"receiptType": self.environment, "appAppleId": APP_APPLE_ID, "bundleId": self.bundle_id,
                "applicationVersion": "1", "originalApplicationVersion": "1", "receiptCreationDate": self.now,
                "originalPurchaseDate": self.now - 86_400_000, "requestDate": self.now,
                "appTransactionId": "704000000000001", "originalPlatform": "iOS"}


class Mock:
    def __init__(self, args):
        if not os.path.exists(os.path.join(args.ca, "root.pem")):
            mint_jws.create_ca(args.ca)
        self.customer = Customer(mint_jws.load_ca(args.ca), args.bundle_id, args.environment, args.transactions,
                                 args.history_names.split(","))
        key = serialization.load_pem_private_key(open(args.key, "rb").read(), password=None)
        self.public_key = key.public_key()
        self.key_id, self.issuer_id, self.bundle_id = args.key_id, args.issuer_id, args.bundle_id
        self.customers, self.forget_requests, self.answer_delay = args.customers, args.forget_requests, args.answer_delay
        self.requests, self.scripted = [], set()
        self.last_request = time.time()
        self.lock = threading.Lock()

    def token_claims(self, authorization):
        """The token's claims, or None when Apple would answer 401."""
        if not authorization or not authorization.startswith("Bearer "):
            return None
        try:
            head, body, signature = authorization[7:].split(".")
            header, claims = json.loads(b64url_decode(head)), json.loads(b64url_decode(body))
            raw = b64url_decode(signature)
            if header != {"alg": "ES256", "kid": self.key_id, "typ": "JWT"} or len(raw) != 64:
                return None
            der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
            self.public_key.verify(der, f"{head}.{body}".encode(), ec.ECDSA(hashes.SHA256()))
        except (ValueError, InvalidSignature, UnicodeDecodeError):
            return None
        now = time.time()
        # Apple's own library sends no iat; when present it must be sane. No token lives past 60 minutes.
        issued = claims.get("iat", now)
        if (claims.get("iss") != self.issuer_id or claims.get("aud") != "appstoreconnect-v1"
                or claims.get("bid") != self.bundle_id or not isinstance(claims.get("exp"), int)
                or not isinstance(issued, (int, float)) or claims["exp"] <= now or issued > now + 60
                or claims["exp"] - issued > 3600 or claims["exp"] > now + 3660):
            return None
        return claims

    def first_time(self, transaction_id):
        with self.lock:
            if transaction_id in self.scripted:
                return False
            self.scripted.add(transaction_id)
            return True

    def answer(self, method, path, query, body):
        """(HTTP status, headers, JSON answer or None)."""
        customer = self.customer
        known = ({t["transactionId"] for t in customer.transactions} | set(customer.history_names)
                 | {ORIGINAL_ID, RATE_LIMITED, FAILING, TAMPERED, LIMITED_FOR_AN_HOUR})
        parts = path.strip("/").split("/")
        transaction_id = parts[-1] if parts[-1].isdigit() else None
        if transaction_id == RATE_LIMITED and self.first_time(transaction_id):
            return 429, {"Retry-After": "1"}, {"errorCode": 4290000, "errorMessage": "Rate limit exceeded."}
        if transaction_id == LIMITED_FOR_AN_HOUR and self.first_time(transaction_id):
            until = int(time.time() * 1000) + 3_600_000
            return 429, {"Retry-After": str(until)}, {"errorCode": 4290000, "errorMessage": "Rate limit exceeded."}
        if transaction_id == FAILING and self.first_time(transaction_id):
            return 500, {}, {"errorCode": 5000001, "errorMessage": "An unknown error occurred. Please try again."}
        not_found = (404, {}, {"errorCode": 4040010, "errorMessage": "Transaction id not found."})
        if transaction_id == ACCOUNT_GONE:
            return 404, {}, {"errorCode": 4040001, "errorMessage": "Account not found."}
        many = customer.one_of_many(transaction_id or "", self.customers)
        if many and parts[:1] == ["inApps"] and len(parts) >= 3 and parts[2] == "history":
            return 200, {}, {"revision": "rev-2", "hasMore": False, "bundleId": self.bundle_id, "appAppleId": APP_APPLE_ID,
                             "environment": customer.environment,
                             "signedTransactions": [mint_jws.sign(t, customer.chains) for t in many[0]]}
        if many and path.startswith("/inApps/v1/subscriptions/") and len(parts) == 4 and method == "GET":
            return 200, {}, {"environment": customer.environment, "bundleId": self.bundle_id, "appAppleId": APP_APPLE_ID,
                             "data": [{"subscriptionGroupIdentifier": "21000000", "lastTransactions": [{
                                 "status": 1, "originalTransactionId": transaction_id,
                                 "signedTransactionInfo": mint_jws.sign(many[0][-1], customer.chains),
                                 "signedRenewalInfo": mint_jws.sign(many[1], customer.chains)}]}]}
        if parts[:1] == ["inApps"] and len(parts) >= 3 and parts[2] == "history":
            if transaction_id not in known:
                return not_found
            items = list(customer.transactions)
            if "productId" in query:
                items = [t for t in items if t["productId"] in query["productId"]]
            if query.get("sort") == ["DESCENDING"]:
                items.reverse()
            start = int(query.get("revision", ["rev-0"])[0][4:])
            page = items[start:start + PAGE]
            signed = [customer.sign(t, "payload-changed" if transaction_id == TAMPERED and start and i == 3 else None)
                      for i, t in enumerate(page)]
            more = start + PAGE < len(items)
            return 200, {}, {"revision": f"rev-{start + PAGE if more else len(items)}", "hasMore": more,
                             "bundleId": self.bundle_id, "appAppleId": APP_APPLE_ID,
                             "environment": customer.environment, "signedTransactions": signed}
        if path.startswith("/inApps/v1/transactions/appTransactions/"):
            if transaction_id not in known:
                return not_found
            return 200, {}, {"signedAppTransactionInfo": customer.sign(customer.app_transaction())}
        if path.startswith("/inApps/v1/transactions/") and len(parts) == 4 and method == "GET":
            match = [t for t in customer.transactions
                     if t["transactionId"] == transaction_id or transaction_id in (RATE_LIMITED, FAILING, TAMPERED, LIMITED_FOR_AN_HOUR)]
            if not match:
                return not_found
            # The scripted ids stand for a transaction of their own: Apple answers the transaction asked for.
            return 200, {}, {"signedTransactionInfo": customer.sign(dict(match[0], transactionId=transaction_id))}
        if path.startswith("/inApps/v1/subscriptions/") and len(parts) == 4 and method == "GET":
            if transaction_id not in known:
                return not_found
            return 200, {}, {"environment": customer.environment, "bundleId": self.bundle_id,
                             "appAppleId": APP_APPLE_ID, "data": [{
                                 "subscriptionGroupIdentifier": "21000000", "lastTransactions": [{
                                     "status": 1, "originalTransactionId": ORIGINAL_ID,
                                     "signedTransactionInfo": customer.sign(customer.transactions[-1]),
                                     "signedRenewalInfo": customer.sign(customer.renewal_info())}]}]}
        if path.startswith("/inApps/v2/refund/lookup/"):
            if transaction_id not in known:
                return not_found
            refunded = [dict(t, revocationDate=customer.now, revocationReason=0) for t in customer.transactions[:2]]
            return 200, {}, {"revision": "rev-refunds", "hasMore": False,
                             "signedTransactions": [customer.sign(t) for t in refunded]}
        if path == "/inApps/v1/notifications/history" and method == "POST":
            start = int(query.get("paginationToken", ["page-0"])[0][5:])
            page = range(start, min(start + NOTIFICATION_PAGE, NOTIFICATIONS))
            more = start + NOTIFICATION_PAGE < NOTIFICATIONS
            answer = {"hasMore": more, "notificationHistory": [
                {"signedPayload": customer.sign(customer.notification(i)),
                 "sendAttempts": [{"attemptDate": customer.now, "sendAttemptResult": "SUCCESS"}]} for i in page]}
            if more:
                answer["paginationToken"] = f"page-{start + NOTIFICATION_PAGE}"
            return 200, {}, answer
        if path.startswith("/inApps/v1/lookup/"):
            return 200, {}, {"status": 0, "signedTransactions": [customer.sign(customer.transactions[0])]}
        if path == "/inApps/v1/notifications/test" and method == "POST":
            return 200, {}, {"testNotificationToken": "ce3af791-365e-4c60-841b-1674b43c1609_1698148900000"}
        if path.startswith("/inApps/v1/notifications/test/"):
            return 200, {}, {"signedPayload": customer.sign(customer.notification(0)),
                             "sendAttempts": [{"attemptDate": customer.now, "sendAttemptResult": "SUCCESS"}]}
        if path == "/inApps/v1/subscriptions/extend/mass":
            return 200, {}, {"requestIdentifier": body.get("requestIdentifier")}
        if path.startswith("/inApps/v1/subscriptions/extend/mass/"):
            return 200, {}, {"requestIdentifier": parts[-1], "complete": True, "completeDate": customer.now,
                             "succeededCount": 30, "failedCount": 2}
        if path.startswith("/inApps/v1/subscriptions/extend/"):
            return 200, {}, {"originalTransactionId": transaction_id, "webOrderLineItemId": "2000000000000999",
                             "success": True, "effectiveDate": customer.now}
        if path.startswith("/advancedCommerce/v1/") and method == "POST":
            return self.advanced_commerce(parts, transaction_id, known, body)
        if path.startswith("/inApps/") and method in ("PUT", "DELETE", "POST"):
            return 200, {}, None
        if path.endswith("/image/list"):
            return 200, {}, {"imageIdentifiers": []}
        if path.endswith("/message/list"):
            return 200, {}, {"messageIdentifiers": []}
        if path.startswith("/inApps/"):
            return 200, {}, {}
        return 404, {}, None


    def advanced_commerce(self, parts, transaction_id, known, body):
        """The Advanced Commerce API: the subscription (or transaction) after the change. A body
        without requestInfo.requestReferenceId is Apple's 400."""
        customer = self.customer
        if not isinstance(body.get("requestInfo"), dict) or "requestReferenceId" not in body["requestInfo"]:
            return 400, {}, {"errorCode": 4000000, "errorMessage": "requestInfo.requestReferenceId is required."}
        if transaction_id not in known:
            return 404, {}, {"errorCode": 4040010, "errorMessage": "Transaction id not found."}
        latest = dict(customer.transactions[-1])
        if parts[2:4] == ["subscription", "revoke"]:
            latest.update(revocationDate=customer.now, revocationReason=0,
                          revocationType="REFUND_FULL" if body.get("refundType") == "FULL" else "REFUND_PRORATED")
        answer = {"signedTransactionInfo": customer.sign(latest)}
        if parts[2] == "subscription":
            answer["signedRenewalInfo"] = customer.sign(customer.renewal_info())
        return 200, {}, answer


def make_handler(mock):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Head and body go out in two writes: with Nagle's algorithm the body waits for the
        # client's delayed acknowledgement of the head (40 ms a request on Linux).
        disable_nagle_algorithm = True

        def log_message(self, *args):
            pass

        def respond(self, status, headers, answer):
            data = b"" if answer is None else json.dumps(answer).encode()
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            if answer is not None:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def handle_any(self, method):
            mock.last_request = time.time()
            url = urllib.parse.urlsplit(self.path)
            query = urllib.parse.parse_qs(url.query)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if url.path == "/__requests":
                with mock.lock:
                    return self.respond(200, {}, mock.requests)
            if url.path == "/__reset":
                with mock.lock:
                    mock.scripted.clear()
                return self.respond(200, {}, {})
            claims = mock.token_claims(self.headers.get("Authorization"))
            try:
                body = json.loads(raw) if raw and self.headers.get("Content-Type") == "application/json" else {}
            except ValueError:
                return self.respond(400, {}, {"errorCode": 4000000, "errorMessage": "Bad request."})
            if not mock.forget_requests:
                with mock.lock:
                    mock.requests.append({"method": method, "path": url.path, "query": query, "body": body,
                                          "body_bytes": len(raw), "content_type": self.headers.get("Content-Type"),
                                          "claims": claims, "at": time.time()})
            if claims is None:
                return self.respond(401, {}, None)
            answer = mock.answer(method, url.path, query, body)
            time.sleep(mock.answer_delay)
            self.respond(*answer)

        def do_GET(self):
            self.handle_any("GET")

        def do_POST(self):
            self.handle_any("POST")

        def do_PUT(self):
            self.handle_any("PUT")

        def do_DELETE(self):
            self.handle_any("DELETE")

    return Handler


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ca", required=True, help="test CA directory (mint_jws.py ca), made when absent")
    parser.add_argument("--key", required=True, help="the in-app purchase key (PKCS #8 PEM) clients sign with")
    parser.add_argument("--key-id", required=True)
    parser.add_argument("--issuer-id", required=True)
    parser.add_argument("--bundle-id", required=True)
    parser.add_argument("--environment", default="Sandbox")
    parser.add_argument("--transactions", type=int, default=45)
    parser.add_argument("--history-names", default=ORIGINAL_ID, metavar="ID,ID,...",
                        help="original transaction ids the notification history names in turn (each answers with the "
                             "customer's transaction history)")
    parser.add_argument("--customers", type=int, default=0, metavar="N",
                        help="answer for original transaction ids 3000000000000000 to 3000000000000000 + N - 1 too")
    parser.add_argument("--forget-requests", action="store_true", help="keep no list of requests (a long bench)")
    parser.add_argument("--answer-delay", type=float, default=0, metavar="SECONDS",
                        help="hold each answer this long, as a distant server does (many requests then in flight)")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--background", action="store_true", help="print the base URL, serve from a child process")
    parser.add_argument("--idle-exit", type=float, default=0, help="with --background: stop after this many idle seconds")
    args = parser.parse_args(argv)
    mock = Mock(args)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(mock))
    url = f"http://127.0.0.1:{server.server_address[1]}"
    if args.background:
        child = os.fork()
        if child:
            with open(os.path.join(args.ca, "mock.pid"), "w") as out:
                out.write(f"{child}\n")
            print(url, flush=True)
            os._exit(0)
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDWR)
        for descriptor in (0, 1, 2):
            os.dup2(devnull, descriptor)
        # Whatever else the starter passed down (Foundation's Process waits on a socket its child
        # inherits) would keep it waiting for as long as the mock serves.
        listening = server.fileno()
        os.closerange(3, listening)
        os.closerange(listening + 1, 65536)
        # A mock whose directory is gone (a test's scratch directory, removed) stops by itself.
        directory = os.path.abspath(args.ca)

        def watch():
            while os.path.isdir(directory) and (not args.idle_exit or time.time() - mock.last_request < args.idle_exit):
                time.sleep(1)
            os._exit(0)

        threading.Thread(target=watch, daemon=True).start()
    else:
        print(f"listening on {url}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
