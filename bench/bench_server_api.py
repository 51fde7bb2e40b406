#!/usr/bin/env python3
"""One page of the App Store Server API: 20 signed transactions read and verified, through
libreceipt's Python client against Apple's own Python library on the same bytes, in one run.

Both make the call through their public method (get_transaction_history) with the network
replaced by the same canned answer: ours with a transport that returns it, Apple's with its
request function overridden. Ours builds the request, reads the answer and verifies every
signed member (libreceipt.api); Apple's builds its request (a new token each time), decodes
its models, and then verifies and decodes each transaction with its SignedDataVerifier
(online checks off), as its users must. Each library trusts the same test root.

    bench_server_api.py WORK_DIR
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import mint_jws  # noqa: E402
from bench_python import median_us  # noqa: E402
from cryptography import x509  # noqa: E402
from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402

from libreceipt import Verifier  # noqa: E402
from libreceipt.api import AppStoreServerAPIClient  # noqa: E402

BUNDLE_ID, KEY_ID, ISSUER_ID = "com.example.minted", "KEY123ABCD", "57246542-96fe-1a63-e053-0824d011072a"


def page_of_transactions(directory, count=20):
    if not os.path.exists(os.path.join(directory, "root.pem")):
        mint_jws.create_ca(directory)
    chains = mint_jws.load_ca(directory)
    signed = []
    for index in range(count):
        payload = mint_jws.example_payload()
        payload["transactionId"] = str(2000000000000100 + index)
        signed.append(mint_jws.sign(payload, chains))
    return json.dumps({"revision": "rev-20", "hasMore": True, "bundleId": BUNDLE_ID, "appAppleId": 1234567890,
                       "environment": "Sandbox", "signedTransactions": signed}).encode()


def main(directory):
    body = page_of_transactions(os.path.join(directory, "api-ca"))
    root = open(os.path.join(directory, "api-ca", "root.pem"), "rb").read()
    key = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())

    ours = AppStoreServerAPIClient(key, KEY_ID, ISSUER_ID, BUNDLE_ID, "sandbox", base_url="http://bench.invalid",
                                   verifier=Verifier(bundle_id=BUNDLE_ID, environment="sandbox", apple_root=False,
                                                     anchors=[root]),
                                   transport=lambda method, url, headers, data, timeout: (200, {}, body))

    def mine():
        return [t["transactionId"] for t in ours.get_transaction_history("2000000000000001", None, None)["transactions"]]

    try:
        from appstoreserverlibrary.api_client import AppStoreServerAPIClient as AppleClient
        from appstoreserverlibrary.models.Environment import Environment
        from appstoreserverlibrary.models.TransactionHistoryRequest import TransactionHistoryRequest
        from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier
    except ImportError:
        print("python: app-store-server-library is not installed; its column is left out")
        print(f"one page of 20 transactions: libreceipt {median_us(mine)[0]:.1f} us")
        return

    class CannedAnswer:
        status_code, headers = 200, {"content-type": "application/json"}

        def json(self):
            return json.loads(body)

    class AppleWithoutNetwork(AppleClient):
        def _execute_request(self, method, url, params, headers, json, data):
            return CannedAnswer()

    apple = AppleWithoutNetwork(key, KEY_ID, ISSUER_ID, BUNDLE_ID, Environment.SANDBOX)
    der = x509.load_pem_x509_certificate(root).public_bytes(serialization.Encoding.DER)
    verifier = SignedDataVerifier([der], False, Environment.SANDBOX, BUNDLE_ID)

    def theirs():
        page = apple.get_transaction_history("2000000000000001", None, TransactionHistoryRequest())
        return [verifier.verify_and_decode_signed_transaction(t).transactionId for t in page.signedTransactions]

    assert mine() == theirs() and len(mine()) == 20
    for _ in range(3):  # warm: the chain cached, as in a server's steady state
        mine()
        theirs()
    ratios, ours_us, theirs_us = [], [], []
    for _ in range(7):  # interleaved, so that a slow spell of the machine hits both alike
        first = median_us(mine, samples=1, target=0.1)[0]
        second = median_us(theirs, samples=1, target=0.2)[0]
        ours_us.append(first)
        theirs_us.append(second)
        ratios.append(second / first)
    print(f"{'one page, 20 signed transactions':40} {'libreceipt.api':>16} {'Apple client + verifier':>26} {'ratio':>8}")
    print(f"{'get_transaction_history, read + verify':40} {statistics.median(ours_us):>13.1f} us "
          f"{statistics.median(theirs_us):>23.1f} us {statistics.median(ratios):>7.1f}x "
          f"({min(ratios):.1f}-{max(ratios):.1f}) (target >= 20)")


if __name__ == "__main__":
    main(sys.argv[1])
