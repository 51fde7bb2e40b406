"""The webhook rows of `make bench`: `receipt serve --store` ingesting notifications with two
webhooks against the same server without any (target >= 0.8x), and the time from a
notification's POST to its event's arrival at a receiver on loopback (p50, p99) under that
sustained ingest; SQLite, and PostgreSQL when Debian's postgresql is installed.

    bench_webhooks.py OUTDIR
"""
import base64
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(ROOT)]
from bench_store import CLI, READ_TOKEN, ingest, mint_inputs  # noqa: E402
import postgres_cluster  # noqa: E402
from test_webhooks import Receiver  # noqa: E402

SECRET = "whsec_" + base64.b64encode(bytes(range(32))).decode()
CLIENTS = 8


def start(store, anchors, webhook_flags):
    flags = [flag for anchor in anchors for flag in ("--anchor", str(anchor))]
    process = subprocess.Popen([CLI, "serve", "--port", "0", "--store", str(store), "--bundle-id", "com.example.minted",
                                "--environment", "sandbox", *flags, *webhook_flags],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               env=dict(os.environ, RECEIPT_READ_TOKEN=READ_TOKEN))
    port = int(re.fullmatch(r"listening on 127\.0\.0\.1:(\d+)\n", process.stdout.readline()).group(1))
    return process, port


def uuid_of(body):
    payload = json.loads(base64.urlsafe_b64decode(json.loads(body)["signedPayload"].split(".")[1] + "=="))
    return payload["notificationUUID"]


def arrived_by_uuid(receiver):
    """When each notification's event first reached `receiver`."""
    with receiver.lock:
        found = {}
        for request in receiver.requests:
            found.setdefault(json.loads(request["body"])["data"]["notification_uuid"], request["arrived"])
        return found


def events_made(location):
    out = subprocess.run([CLI, "events", "list", "--store", str(location), "--limit", "1000"], check=True,
                         capture_output=True, text=True).stdout
    return len(json.loads(out)["events"])


def run(location, anchors, bodies, receivers, directory):
    flags = []
    for index, receiver in enumerate(receivers):
        secret = directory / f"webhook-{index}.secret"
        secret.write_text(SECRET)
        secret.chmod(0o600)
        flags += ["--webhook", receiver.url, "--webhook-secret-file", str(secret)]
    process, port = start(location, anchors, flags)
    try:
        posted_bodies = {}
        rate = ingest(port, bodies, CLIENTS, posted_bodies)
        posted = {uuid_of(body): at for body, at in posted_bodies.items()}
        if not receivers:
            return rate, None
        made = events_made(location)
        deadline = time.time() + 60
        while time.time() < deadline and any(len(receiver.delivered()) < made for receiver in receivers):
            time.sleep(0.05)
        arrivals = [arrived_by_uuid(receiver) for receiver in receivers]
        latencies = sorted((arrived - posted[uuid]) * 1000 for found in arrivals for uuid, arrived in found.items())
        return rate, (made, [len(found) for found in arrivals], latencies)
    finally:
        process.terminate()
        process.wait(30)


def percentile(values, share):
    return values[min(len(values) - 1, int(len(values) * share))] if values else float("nan")


def row(name, make_location, anchors, bodies, directory):
    without, _ = run(make_location(), anchors, bodies, [], directory)
    receivers = [Receiver(verify=False), Receiver(verify=False)]
    with_two, (made, arrived, latencies) = run(make_location(), anchors, bodies, receivers, directory)
    ratio = with_two / without
    print(f"{name}: ingest with two webhooks {with_two:,.0f} notifications/s, without {without:,.0f}/s: "
          f"{ratio:.2f}x (target >= 0.8): {'met' if ratio >= 0.8 else 'NOT met'}")
    print(f"  {made} events made, {arrived} delivered to each receiver; notification POST to webhook arrival under "
          f"{CLIENTS} ingesting clients: p50 {percentile(latencies, 0.5):.1f} ms, p99 {percentile(latencies, 0.99):.1f} ms")


def main():
    directory = pathlib.Path(sys.argv[1])
    directory.mkdir(parents=True, exist_ok=True)
    bodies, anchors, _ = mint_inputs(directory)
    print(f"{len(bodies)} distinct minted notifications, {CLIENTS} clients")
    with tempfile.TemporaryDirectory() as scratch:
        names = iter(range(100))
        row("SQLite", lambda: pathlib.Path(scratch) / f"webhooks-{next(names)}.db", anchors, bodies, directory)
    if postgres_cluster.server_binaries() is None:
        print("PostgreSQL: not installed (scripts/install-deps.sh test installs it): row skipped")
        return
    with postgres_cluster.cluster() as url:
        databases = iter(range(100))

        def database():
            name = f"webhooks{next(databases)}"
            subprocess.run(["psql", url, "-q", "-c", f"CREATE DATABASE {name}"], check=True)
            return url.rsplit("/", 1)[0] + "/" + name
        row("PostgreSQL", database, anchors, bodies, directory)


if __name__ == "__main__":
    main()
