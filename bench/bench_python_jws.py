#!/usr/bin/env python3
"""Python rows for StoreKit 2 JWS: libreceipt's Verifier.verify_jws against Apple's own
Python library (app-store-server-library's SignedDataVerifier, online checks off) on the
same signed transactions, each library trusting the same root and checking the same
bundle id (the first file's) and environment (sandbox). Both read the payload into a
Python object.

    bench_python_jws.py ROOT_CERT FILE...
"""
import statistics
import sys

import libreceipt
from bench_python import median_us


def main(root_path, files):
    root = open(root_path, "rb").read()
    bundle_id = libreceipt.decode_jws_unverified(open(files[0]).read()).payload["bundleId"]
    pinned = root_path.endswith("AppleRootCA-G3.pem") or root_path.endswith("AppleRootCA-G3.cer")
    ours = libreceipt.Verifier(bundle_id=bundle_id, environment="sandbox",
                               **({} if pinned else {"apple_root": False, "anchors": [root]}))
    # Each file's own bundle id is checked by both; the first file names it.
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives.serialization import Encoding
        from appstoreserverlibrary.models.Environment import Environment
        from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier
        der = x509.load_pem_x509_certificate(root).public_bytes(Encoding.DER) if b"BEGIN" in root else root
        apple = SignedDataVerifier([der], False, Environment.SANDBOX, bundle_id)
    except ImportError:
        apple = None
        print("python: app-store-server-library is not installed; its column is left out")
    print(f"{'JWS':40} {'libreceipt verify_jws':>24} {'Apple verify_and_decode':>26} {'ratio':>8}")
    for path in files:
        token = open(path).read().strip()

        def mine():
            result = ours.verify_jws(token)
            assert result.valid, result.to_json()
            return result.payload["transactionId"]

        theirs_call = (lambda: apple.verify_and_decode_signed_transaction(token).transactionId) if apple else None
        if theirs_call:
            assert theirs_call() == mine()
        name = path.rsplit("/", 1)[-1]
        if theirs_call is None:
            first = median_us(mine)
            print(f"{name:40} {first[0]:>12.1f} us ({first[1]:.1f}-{first[2]:.1f})")
            continue
        for _ in range(3):  # warm: the chain cached, the leaf's ES256 table built (bench.c says why)
            mine()
        # Interleaved: each sample times both, so a slow spell of the machine hits both alike.
        ratios, ours_us, theirs_us = [], [], []
        for _ in range(7):
            first = median_us(mine, samples=1, target=0.05)[0]
            theirs = median_us(theirs_call, samples=1, target=0.1)[0]
            ours_us.append(first)
            theirs_us.append(theirs)
            ratios.append(theirs / first)
        print(f"{name:40} {statistics.median(ours_us):>12.1f} us {statistics.median(theirs_us):>20.1f} us "
              f"{statistics.median(ratios):>7.1f}x ({min(ratios):.1f}-{max(ratios):.1f}) (target >= 40)")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
