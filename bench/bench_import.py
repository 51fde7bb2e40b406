"""`receipt import` against its budget: IMPORT_BENCH_IDS original transaction ids (100,000) of
tools/mock_appstore_api.py --customers into a new SQLite store, at IMPORT_BENCH_RATE calls a second
to each endpoint (200). Each id takes one transaction history call and one status call, so the
budget allows ids / rate seconds; printed: that time, the time taken, and their ratio (#59's
target: at most 1.10). Then the same list again, which finds every id already current.

    bench_import.py OUTDIR
"""
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "Tests" / "python")]
from conftest import MOCK_API_IDS, api_mock_running  # noqa: E402

CLI = os.environ.get("RECEIPT_CLI", str(ROOT / "build" / "bin" / "receipt"))
IDS = int(os.environ.get("IMPORT_BENCH_IDS", "100000"))
RATE = int(os.environ.get("IMPORT_BENCH_RATE", "200"))
FIRST = 3000000000000000  # the mock's first customer of --customers


def run(base, directory, ids):
    started = time.monotonic()
    result = subprocess.run([CLI, "import", "--store", str(directory / "import.db"), "--ids", str(ids),
                             "--calls-per-second", str(RATE), "--environment", "sandbox", "--base-url", base,
                             "--private-key-file", str(directory / "mock" / "key.pem"),
                             "--key-id", MOCK_API_IDS["key_id"], "--issuer-id", MOCK_API_IDS["issuer_id"],
                             "--bundle-id", MOCK_API_IDS["bundle_id"], "--anchor", str(directory / "mock" / "ca" / "root.pem"),
                             "--no-apple-root"], capture_output=True, text=True)
    elapsed = time.monotonic() - started
    if result.returncode != 0:
        sys.exit(f"receipt import failed ({result.returncode}): {result.stderr[-2000:]}")
    return elapsed, result.stdout.strip()


def main():
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    directory = pathlib.Path(sys.argv[1]) / "import"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "mock").mkdir(exist_ok=True)
    (directory / "import.db").unlink(missing_ok=True)
    ids = directory / "ids.txt"
    ids.write_text("".join(f"{FIRST + n}\n" for n in range(IDS)))
    key = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    budget = IDS / RATE
    with api_mock_running(directory / "mock", key, "--customers", str(IDS), "--forget-requests") as (base, _):
        first, summary = run(base, directory, ids)
        print(f"{IDS:,} ids at {RATE} calls/s an endpoint: the budget allows {budget:,.0f} s; took {first:,.0f} s: "
              f"{first / budget:.2f}x the budget (target <= 1.10x); {summary}")
        again, summary = run(base, directory, ids)
        print(f"the same list again: {again:,.0f} s, {again / budget:.2f}x the budget; {summary}")


if __name__ == "__main__":
    main()
