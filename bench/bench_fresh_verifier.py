#!/usr/bin/env python3
"""A notification with its nested transaction and renewal info, verified and decoded into Apple's
models as a backend in Apple's documented style does (verify_and_decode_notification, then
verify_and_decode_signed_transaction and _renewal_info on its nested JWS), with a verifier made
for each request ("fresh") and with one reused ("warm"): libreceipt's drop-in against Apple's
own Python library (app-store-server-library, online checks off), side by side in one run, each
figure the median of interleaved rounds. Also the Swift figures (`receipt bench --json`:
verify_cold, a ReceiptVerifier made for the verification, against verify_warm) when --cli is
given. Targets (#58): fresh within 3x warm; fresh no slower than Apple's fresh; warm >= 10x Apple's.

    bench_fresh_verifier.py ROOT_CERT NOTIFICATION [--cli RECEIPT] [--rounds N]
"""
import argparse
import base64
import json
import statistics
import subprocess
import time

from libreceipt.appstoreserverlibrary.signed_data_verifier import SignedDataVerifier as Ours

ENVIRONMENTS = {"Sandbox": "SANDBOX", "Production": "PRODUCTION"}


def median_ms(call, seconds):
    """Median of single calls, over about `seconds`."""
    times, end = [], time.perf_counter() + seconds
    while time.perf_counter() < end or len(times) < 5:
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def der(path):
    data = open(path, "rb").read()
    if b"BEGIN" not in data:
        return data
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding
    return x509.load_pem_x509_certificate(data).public_bytes(Encoding.DER)


def request(verifier, token):
    """A notification request as Apple's README handles one: the notification, then its nested JWS."""
    notification = verifier.verify_and_decode_notification(token)
    data = notification.data
    transaction = verifier.verify_and_decode_signed_transaction(data.signedTransactionInfo)
    renewal = verifier.verify_and_decode_renewal_info(data.signedRenewalInfo) if data.signedRenewalInfo else None
    return notification.notificationUUID, transaction.transactionId, renewal and renewal.originalTransactionId


def swift_figures(cli, path, rounds):
    """(fresh ms, warm ms, ratios) from the CLI: ReceiptVerifier.verify(jws:) with a verifier made for it
    against a reused one; a notification's nested JWS are verified inside the one call."""
    ratios, fresh, warm = [], [], []
    for _ in range(rounds):
        line = subprocess.run([cli, "bench", "--json", "--samples", "5", path], check=True, capture_output=True,
                              text=True).stdout.strip().splitlines()[-1]
        figures = json.loads(line)
        fresh.append(figures["verify_cold"] / 1e6)
        warm.append(figures["verify_warm"] / 1e6)
        ratios.append(figures["verify_cold"] / figures["verify_warm"])
    return statistics.median(fresh), statistics.median(warm), ratios


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("notification")
    parser.add_argument("--cli")
    parser.add_argument("--rounds", type=int, default=7)
    options = parser.parse_args()
    root, token = der(options.root), open(options.notification).read().strip()
    claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))["data"]
    environment, bundle_id = claims["environment"], claims["bundleId"]
    app_apple_id = claims.get("appAppleId")

    def ours():
        return Ours([root], False, environment, bundle_id, app_apple_id)

    libraries = {"libreceipt drop-in": ours}
    try:
        from appstoreserverlibrary.models.Environment import Environment
        from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier as Apples
        libraries["Apple's library"] = lambda: Apples([root], False, Environment[ENVIRONMENTS[environment]],
                                                       bundle_id, app_apple_id)
    except ImportError:
        print("python: app-store-server-library is not installed; its column is left out")
    warm = {name: make() for name, make in libraries.items()}
    answers = {name: request(verifier, token) for name, verifier in warm.items()}
    assert len(set(answers.values())) == 1, answers  # both libraries read the same request alike
    samples = {(name, kind): [] for name in libraries for kind in ("fresh", "warm")}
    for _ in range(options.rounds):  # interleaved: a slow spell of the machine hits every figure alike
        for name, make in libraries.items():
            samples[name, "fresh"].append(median_ms(lambda: request(make(), token), 0.15))
            samples[name, "warm"].append(median_ms(lambda: request(warm[name], token), 0.15))
    figures = {key: statistics.median(values) for key, values in samples.items()}
    print(f"{'a notification + its 2 nested JWS (ms)':44} {'fresh verifier':>15} {'warm verifier':>14} {'fresh/warm':>11}")
    for name in libraries:
        ratios = [f / w for f, w in zip(samples[name, "fresh"], samples[name, "warm"])]
        print(f"{'Python, ' + name:44} {figures[name, 'fresh']:>15.3f} {figures[name, 'warm']:>14.3f} "
              f"{statistics.median(ratios):>10.1f}x ({min(ratios):.1f}-{max(ratios):.1f})")
    if "Apple's library" in libraries:
        for kind in ("fresh", "warm"):
            ratios = [a / o for a, o in zip(samples["Apple's library", kind], samples["libreceipt drop-in", kind])]
            target = "target >= 1" if kind == "fresh" else "target >= 10"
            print(f"  Apple's {kind} / the drop-in's {kind}: {statistics.median(ratios):.1f}x "
                  f"({min(ratios):.1f}-{max(ratios):.1f}) ({target})")
    if options.cli:
        fresh, warm_ms, ratios = swift_figures(options.cli, options.notification, options.rounds)
        print(f"{'Swift, ReceiptVerifier.verify(jws:)':44} {fresh:>15.3f} {warm_ms:>14.3f} "
              f"{statistics.median(ratios):>10.1f}x ({min(ratios):.1f}-{max(ratios):.1f})")
    print("  target: fresh/warm <= 3 (#58)")


if __name__ == "__main__":
    main()
