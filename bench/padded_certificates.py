#!/usr/bin/env python3
"""The key-less denial of service of padding a receipt with certificates, measured:
verification cost per input byte of a receipt padded with copies of its own leaf
(refused: too many certificates) against a genuine receipt of the same size.
   padded_certificates.py GENUINE_SAME_SIZE SMALL_RECEIPT ANCHOR.pem
Samples are interleaved; the ratio is the median of per-sample ratios."""
import pathlib
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tools"))
import der_tree  # noqa: E402

import libreceipt  # noqa: E402


def seconds(verifier, data, repeat):
    start = time.perf_counter()
    for _ in range(repeat):
        verifier.verify_bytes(data)
    return (time.perf_counter() - start) / repeat


def main(genuine_path, small_path, anchor_path):
    genuine = pathlib.Path(genuine_path).read_bytes()
    padded = der_tree.padded_with_certificates(pathlib.Path(small_path).read_bytes(), len(genuine))
    verifier = libreceipt.Verifier(apple_root=False, anchors=[pathlib.Path(anchor_path).read_bytes()])
    assert verifier.verify_bytes(genuine).valid
    assert verifier.verify_bytes(padded).status_name == "RECEIPT_E_TOO_MANY_CERTIFICATES"
    samples = [(seconds(verifier, padded, 5), seconds(verifier, genuine, 5)) for _ in range(11)]
    padded_s = statistics.median(s[0] for s in samples)
    genuine_s = statistics.median(s[1] for s in samples)
    ratios = sorted(p / g for p, g in samples)
    print(f"padded with certificates, {len(padded)} bytes: {padded_s * 1e6:.0f} us "
          f"({padded_s * 1e9 / len(padded):.2f} ns/byte), refused")
    print(f"genuine receipt, {len(genuine)} bytes: {genuine_s * 1e6:.0f} us ({genuine_s * 1e9 / len(genuine):.2f} ns/byte)")
    print(f"padded / genuine, per byte: {statistics.median(ratios):.3f}x (min-max {ratios[0]:.3f}-{ratios[-1]:.3f})")


if __name__ == "__main__":
    main(*sys.argv[1:])
