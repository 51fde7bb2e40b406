"""A notification's cost against the history it joins (issue 56, rule 6): `receipt serve --store`
(SQLite) ingesting N notifications of fresh subscriptions (a customer each), N under one app
account token (the account's history growing), and N renewals of one subscription, side by side
in one run, rounds alternating; each history's rate as a ratio of the fresh one's (target >= 0.8x).

    bench_ingest_history.py OUTDIR [N] [ROUNDS]
"""
import copy
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT)]
from bench_store import CLI, READ_TOKEN, ingest, jws_ca, mint_jws  # noqa: E402

ACCOUNT = "7e3fb20b-4cdb-47cc-936d-99d65f608138"


def kinds(directory, count):
    """{kind: [bodies]} for the three histories."""
    ca, chains = jws_ca(directory)
    now = int(time.time()) * 1000

    def first_of(original, token, uuid):
        # The story's own UUIDs repeat after 1,000 subscriptions 1,000 ids apart: each is made unique here.
        payload = mint_jws.notification_story(original, token, now=now)[0][1]
        payload["notificationUUID"] = uuid
        return payload

    fresh = [first_of(str(5000000000000001 + i * 1000), f"7e3fb20b-4cdb-47cc-936d-{i:012d}", f"5a5a5a5a-0000-4000-8000-{i:012d}")
             for i in range(count)]
    account = [first_of(str(6000000000000001 + i * 1000), ACCOUNT, f"6a6a6a6a-0000-4000-8000-{i:012d}") for i in range(count)]
    renewals = []
    template = mint_jws.notification_story("7000000000000001", ACCOUNT, now=now)[1][1]  # a DID_RENEW
    for i in range(count):
        payload = copy.deepcopy(template)
        signed = now - (count - i) * 1000
        payload["notificationUUID"] = f"7a7a7a7a-0000-4000-8000-{i:012d}"
        payload["signedDate"] = signed
        transaction = payload["data"]["signedTransactionInfo"]
        # Daily periods, one after another, the last ending tomorrow: each renewal a period of its own.
        began = now - (count - i) * 86_400_000
        transaction.update(transactionId=str(7000000000100001 + i), webOrderLineItemId=str(7000000000200001 + i),
                           purchaseDate=began, expiresDate=began + 2 * 86_400_000, signedDate=signed)
        payload["data"]["signedRenewalInfo"]["signedDate"] = signed
        renewals.append(payload)
    return {name: [mint_jws.sign_notification(payload, chains) for payload in payloads]
            for name, payloads in (("fresh", fresh), ("one_account", account), ("one_subscription", renewals))}, ca


def rate(directory, bodies, ca):
    store = directory / f"store-{time.time_ns()}.db"
    process = subprocess.Popen([CLI, "serve", "--port", "0", "--store", str(store), "--bundle-id", "com.example.minted",
                                "--environment", "sandbox", "--anchor", str(ca / "root.pem")],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               env=dict(os.environ, RECEIPT_READ_TOKEN=READ_TOKEN))
    try:
        port = int(process.stdout.readline().rsplit(":", 1)[1])
        return ingest(port, bodies, clients=4), store.stat().st_size / len(bodies)
    finally:
        process.terminate()
        process.wait(30)


def main():
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(tempfile.mkdtemp())
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    out.mkdir(parents=True, exist_ok=True)
    bodies, ca = kinds(out, count)
    rates = {name: [] for name in bodies}
    sizes = {}
    for _ in range(rounds):
        for name in bodies:
            measured, sizes[name] = rate(out, bodies[name], ca)
            rates[name].append(measured)
    fresh = statistics.median(rates["fresh"])
    print(f"ingest by history, {count} notifications, {rounds} rounds (load {os.getloadavg()[0]:.2f}):")
    for name, values in rates.items():
        median = statistics.median(values)
        print(f"  {name:17} {median:7.0f}/s  {median / fresh:5.2f}x of fresh  {sizes[name] / 1024:5.1f} KiB of store "
              f"a notification  (rounds {', '.join(f'{v:.0f}' for v in values)})")


if __name__ == "__main__":
    main()
