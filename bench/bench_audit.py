"""`receipt audit` against in-process verification (#60's bench): a store of AUDIT_BENCH_IDS (5,000)
subscriptions of tools/mock_appstore_api.py --customers, filled by `receipt import` (every row a JWS
the mock's CA signed), audited; printed: the JWS verified a second, and that rate against the
in-process rate on every core (`receipt bench`'s verify_warm of one of the store's JWS, a core,
times the cores; #60's target: at least 0.8x). The audit also writes a scratch store and computes
every figure twice: its rate counts all of that.

    bench_audit.py OUTDIR
"""
import json
import os
import pathlib
import sqlite3
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "Tests" / "python"), str(ROOT / "bench")]
from conftest import MOCK_API_IDS, api_mock_running  # noqa: E402
from bench_import import FIRST  # noqa: E402

CLI = os.environ.get("RECEIPT_CLI", str(ROOT / "build" / "bin" / "receipt"))
IDS = int(os.environ.get("AUDIT_BENCH_IDS", "5000"))


def main():
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    directory = pathlib.Path(sys.argv[1]) / "audit"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "mock").mkdir(exist_ok=True)
    store = directory / "audit.db"
    for suffix in ("", "-wal", "-shm"):
        pathlib.Path(str(store) + suffix).unlink(missing_ok=True)
    ids = directory / "ids.txt"
    ids.write_text("".join(f"{FIRST + n}\n" for n in range(IDS)))
    key = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    anchor = ["--anchor", str(directory / "mock" / "ca" / "root.pem"), "--no-apple-root"]
    with api_mock_running(directory / "mock", key, "--customers", str(IDS), "--forget-requests") as (base, _):
        subprocess.run([CLI, "import", "--store", str(store), "--ids", str(ids), "--calls-per-second", "10000",
                        "--environment", "sandbox", "--base-url", base, "--private-key-file", str(directory / "mock" / "key.pem"),
                        "--key-id", MOCK_API_IDS["key_id"], "--issuer-id", MOCK_API_IDS["issuer_id"],
                        "--bundle-id", MOCK_API_IDS["bundle_id"], *anchor], check=True, capture_output=True)
    with sqlite3.connect(store) as connection:
        jws = connection.execute("SELECT jws FROM transactions LIMIT 1").fetchone()[0]
    started = time.monotonic()
    audited = subprocess.run([CLI, "audit", "--store", str(store), "--bundle-id", MOCK_API_IDS["bundle_id"],
                              "--environment", "sandbox", *anchor], capture_output=True, text=True)
    elapsed = time.monotonic() - started
    if audited.returncode != 0:
        sys.exit(f"receipt audit failed ({audited.returncode}): {audited.stdout[-2000:]} {audited.stderr[-2000:]}")
    summary = audited.stdout.splitlines()[-1]
    verified = sum(int(word) for word in summary.split(";")[0].split() if word.isdigit())
    (directory / "one.jws").write_text(jws)
    bench = subprocess.run([CLI, "bench", "--json", "--anchor", str(directory / "mock" / "ca" / "root.pem"),
                            str(directory / "one.jws")], check=True, capture_output=True, text=True)
    warm = next(json.loads(line)["verify_warm"] for line in bench.stdout.splitlines() if "verify_warm" in line)
    cores = os.cpu_count() or 1
    in_process = cores * 1e9 / warm
    rate = verified / elapsed
    print(f"receipt audit: {verified:,} JWS in {elapsed:.1f} s, {rate:,.0f} JWS/s (with the scratch store and the figures); "
          f"in-process verify_warm {warm:,} ns on {cores} cores: {in_process:,.0f} JWS/s; "
          f"{rate / in_process:.2f}x (target >= 0.8x); {summary}")


if __name__ == "__main__":
    main()
