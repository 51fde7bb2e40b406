#!/usr/bin/env python3
"""Python rows of the benchmark: libreceipt's binding against Apple's own Python
library (app-store-server-library), on the same receipts, given as the base64 text
both accept. Apple's library only extracts a transaction id; libreceipt parses every
field and reads the first transaction id too.

    bench_python.py FILE...
"""
import base64
import statistics
import sys
import time

import libreceipt


def median_us(function, samples=7, target=0.05):
    batch = 1
    while True:
        start = time.perf_counter()
        for _ in range(batch):
            function()
        elapsed = time.perf_counter() - start
        if elapsed > target / 4:
            batch = max(1, int(batch * target / elapsed))
            break
        batch *= 4
    results = []
    for _ in range(samples):
        start = time.perf_counter()
        for _ in range(batch):
            function()
        results.append((time.perf_counter() - start) / batch * 1e6)
    return statistics.median(results), min(results), max(results)


def main(files):
    try:
        from appstoreserverlibrary.receipt_utility import ReceiptUtility
        apple = ReceiptUtility()
    except ImportError:
        apple = None
        print("python: app-store-server-library is not installed (pip install app-store-server-library); "
              "its column is left out")
    print(f"{'receipt':40} {'libreceipt parse':>22} {'Apple extract_transaction_id':>30} {'ratio':>8}")
    for path in files:
        text = base64.b64encode(open(path, "rb").read()).decode()

        def ours():
            receipt = libreceipt.Receipt(text)
            purchases = receipt.purchases
            return purchases[0].transaction_id if purchases else None

        mine = median_us(ours)
        name = path.rsplit("/", 1)[-1]
        if apple is None:
            print(f"{name:40} {mine[0]:>10.1f} us ({mine[1]:.1f}-{mine[2]:.1f})")
            continue
        theirs = median_us(lambda: apple.extract_transaction_id_from_app_receipt(text), samples=5, target=0.2)
        print(f"{name:40} {mine[0]:>10.1f} us ({mine[1]:.1f}-{mine[2]:.1f}) {theirs[0]:>14.1f} us "
              f"({theirs[1]:.0f}-{theirs[2]:.0f}) {theirs[0] / mine[0]:>7.0f}x (target >= 100)")


if __name__ == "__main__":
    main(sys.argv[1:])
