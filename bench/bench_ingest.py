"""Ingest, as App Store Server Notifications arrive: distinct minted notifications POSTed by 8
keep-alive clients to `receipt serve --store`, each answered 200 only once durable, with a
webhook registered (every notification makes an event and a delivery in its transaction, and
the worker delivers them meanwhile to a local receiver). On SQLite, and on PostgreSQL (a
throwaway cluster) when Debian's postgresql is installed. Each round starts a new store;
the median of SERVE_BENCH_ROUNDS rounds (3) is printed with every round's figure, and the
server's CPU a notification (its own process: not the database's on PostgreSQL), which swings
less than the rate on a shared machine.

    bench_ingest.py OUTDIR
"""
import http.server
import os
import pathlib
import statistics
import sys
import tempfile
import threading

sys.path[:0] = [str(pathlib.Path(__file__).resolve().parent)]
import bench_store  # noqa: E402
from bench_store import postgres_cluster  # noqa: E402

ROUNDS = int(os.environ.get("SERVE_BENCH_ROUNDS", "3"))
bench_store.SUBSCRIPTIONS = 200  # x 7 notifications each: 1,400 a round


class Receiver(http.server.BaseHTTPRequestHandler):
    """A webhook receiver that takes every delivery."""

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *_):
        pass


def cpu_seconds(pid):
    """The user and system CPU a process has used (/proc/PID/stat's utime and stime)."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rounds(name, locations, bodies, anchors, directory):
    receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    secret = directory / "webhook.secret"
    secret.write_text("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n")
    secret.chmod(0o600)
    webhook = ["--webhook", f"http://127.0.0.1:{receiver.server_address[1]}/hook", "--webhook-secret-file", str(secret)]
    rates, cpu = [], []
    try:
        for location in locations():
            process, port = bench_store.start(location, anchors, webhook)
            try:
                before = cpu_seconds(process.pid)
                rates.append(bench_store.ingest(port, bodies))
                cpu.append((cpu_seconds(process.pid) - before) / len(bodies) * 1000)
            finally:
                process.terminate()
                process.wait(30)
    finally:
        receiver.shutdown()
    print(f"{name}: ingested {statistics.median(rates):,.0f} notifications/s, median of {len(rates)} rounds "
          f"({', '.join(f'{rate:,.0f}' for rate in rates)}); {len(bodies)} distinct, 8 clients, a webhook on; "
          f"the server's CPU {statistics.median(cpu):.2f} ms a notification ({', '.join(f'{ms:.2f}' for ms in cpu)})")


def main():
    directory = pathlib.Path(sys.argv[1])
    directory.mkdir(parents=True, exist_ok=True)
    bodies, anchors, _ = bench_store.mint_inputs(directory)
    with tempfile.TemporaryDirectory() as scratch:
        rounds("SQLite", lambda: (pathlib.Path(scratch) / f"ingest-{index}.db" for index in range(ROUNDS)),
               bodies, anchors, directory)
    if postgres_cluster.server_binaries() is None:
        print("PostgreSQL: not installed (scripts/install-deps.sh test installs it): row skipped")
        return

    def databases():
        for _ in range(ROUNDS):
            with postgres_cluster.cluster() as url:
                yield url
    rounds("PostgreSQL", databases, bodies, anchors, directory)


if __name__ == "__main__":
    main()
