"""The store rows of `make bench`: `receipt serve --store` with SQLite and with PostgreSQL
(a throwaway cluster, when Debian's postgresql is installed), measured in one run:

- notifications ingested per second: distinct minted notifications (tools/mint_jws.py
  notification_story) POSTed by 8 keep-alive clients, each answered 200 only once stored;
  printed beside an assumed peak of Apple's delivery for an app of 1,000,000 subscribers;
- GET /v1/subscriptions/{id} and POST /verifyReceipt merged with the store, under wrk
  (64 connections), each against its composition floor measured in the same run: the
  framework's empty request under the same load (GET /healthz) plus the in-process work
  (`receipt bench-store`: one store read, the state or the verdict and merged answer,
  16 calls at a time as a server's requests come, so over every core). The measures are
  taken in turn, SERVE_BENCH_ROUNDS times (5), and their medians compared, so that a change
  in the machine's load between them moves every part alike. Target: >= 0.85x. The merged
  answer is also shown against a POST of its body's size that the endpoint refuses at the
  first byte instead of the empty GET (the framework's request with its body, as
  bench/bench_realtime.sh's floor).
- the same two ratios in instructions (valgrind's callgrind, when installed): the server's
  instructions per read and per empty request, and `receipt bench-store`'s per read, each the
  difference between runs of two sizes (which cancels start-up). Unlike the timings they are the
  same whatever else the machine does; where the two ratios part, the server does the floor's
  work but each instruction costs it more (caches and branch predictors shared with the
  network stack and wrk on the same cores), not more work.
- on SQLite, whose work is all in the server's process, the same reads in CPU time a request
  (the server's user and system time from /proc, wrk's own): what a read adds over the empty
  GET, less the in-process work, split between the server's user time, its system time and
  wrk's, to show where the time beyond the floor goes.

    bench_store.py OUTDIR
"""
import base64
import datetime
import http.client
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tools"), str(ROOT / "Tests" / "python")]
import mint_jws  # noqa: E402
import postgres_cluster  # noqa: E402

CLI = os.environ.get("RECEIPT_CLI", str(ROOT / "build" / "bin" / "receipt"))
CORES = os.cpu_count() or 2
SUBSCRIPTIONS = 60  # x 7 notifications each
SECONDS = int(os.environ.get("SERVE_BENCH_SECONDS", "5"))
# 1,000,000 monthly subscribers renew about 33,000 times a day; each renewal brings a DID_RENEW, and
# about as many other notifications again (renewal status changes, failures, refunds, offers). Assume a
# day's worth arrives within one hour (Apple renews in batches ahead of expiry): the peak we must absorb.
APPLE_PEAK = 1_000_000 / 30 * 2 / 3600


def jws_ca(directory):
    """(the directory of a JWS test CA in `directory`, made once, and its chains)."""
    ca = directory / "jws-ca"
    if not (ca / "root.pem").exists():
        mint_jws.create_ca(str(ca))
    return ca, mint_jws.load_ca(str(ca))


def mint_inputs(directory):
    ca, chains = jws_ca(directory)
    now = int(time.time()) * 1000
    bodies = []
    for index in range(SUBSCRIPTIONS):
        original = str(4000000000000001 + index * 1000)
        # One customer (app account token) per subscription, as apps name their accounts.
        token = f"7e3fb20b-4cdb-47cc-936d-{index:012d}"
        bodies += [mint_jws.sign_notification(payload, chains)
                   for _, payload in mint_jws.notification_story(original, token, now=now)]
    story = mint_jws.notification_story("4000000000000001", now=now)
    first = story[0][1]["data"]["signedTransactionInfo"]
    iso = lambda ms: datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    spec = {"receipt_type": "ProductionSandbox", "bundle_id": "com.example.minted",
            "receipt_creation_date": iso(first["purchaseDate"] + 60_000),
            "in_app": [{"quantity": 1, "product_id": first["productId"], "transaction_id": first["transactionId"],
                        "original_transaction_id": first["originalTransactionId"],
                        "purchase_date": iso(first["purchaseDate"]),
                        "original_purchase_date": iso(first["originalPurchaseDate"]), "product_type": 3,
                        "expires_date": iso(first["expiresDate"]),
                        "web_order_line_item_id": int(first["webOrderLineItemId"])}]}
    (directory / "store-spec.json").write_text(json.dumps(spec))
    receipt_ca = directory / "ca"
    if not (receipt_ca / "root.pem").exists():
        subprocess.run([sys.executable, str(ROOT / "tools" / "mint_receipt.py"), "ca", str(receipt_ca)], check=True,
                       stdout=subprocess.DEVNULL)
    subprocess.run([sys.executable, str(ROOT / "tools" / "mint_receipt.py"), "receipt", str(directory / "store-receipt.der"),
                    "--ca", str(receipt_ca), "--spec", str(directory / "store-spec.json")], check=True)
    body = json.dumps({"receipt-data": base64.b64encode((directory / "store-receipt.der").read_bytes()).decode()})
    (directory / "store-verify-body.json").write_text(body)
    # The same size, refused at its first byte (not JSON): what receiving the body costs.
    (directory / "store-refused-body.json").write_text("x" * len(body))
    return bodies, [ca / "root.pem", receipt_ca / "root.pem"], first["originalTransactionId"]


#: The read token the bench's server takes; wrk sends it on every request.
READ_TOKEN = "bench-read-token-of-22-chars"


def serve_command(store, anchors, extra=()):
    """`receipt serve` on a free port over `store`, taking the minted app's notifications."""
    flags = [flag for anchor in anchors for flag in ("--anchor", str(anchor))]
    return [CLI, "serve", "--port", "0", "--store", str(store), "--bundle-id", "com.example.minted",
            "--environment", "sandbox", *flags, *extra]


def start(store, anchors, extra=()):
    process = subprocess.Popen(serve_command(store, anchors, extra),
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               env=dict(os.environ, RECEIPT_READ_TOKEN=READ_TOKEN))
    port = int(re.fullmatch(r"listening on 127\.0\.0\.1:(\d+)\n", process.stdout.readline()).group(1))
    return process, port


def ingest(port, bodies, clients=8, posted=None):
    """Notifications per second; `posted` (a dict), when given, gets when each body was sent."""
    failures = []

    def send(part):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for body in part:
            if posted is not None:
                posted[body] = time.time()
            connection.request("POST", "/notifications/v2", body, {"Content-Type": "application/json"})
            answer = connection.getresponse()
            answer.read()
            if answer.status != 200:
                failures.append(answer.status)
        connection.close()

    threads = [threading.Thread(target=send, args=(bodies[i::clients],)) for i in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    if failures:
        raise SystemExit(f"ingest: {len(failures)} notifications refused ({failures[:3]})")
    return len(bodies) / elapsed


def wrk(url, body=None):
    environment = dict(os.environ, BODY=str(body)) if body else None
    script = ["-s", str(ROOT / "bench" / "wrk_post.lua")] if body else []
    out = subprocess.run(["wrk", "-t2", "-c64", f"-d{SECONDS}s", "-H", f"Authorization: Bearer {READ_TOKEN}", *script, url],
                         capture_output=True, text=True,
                         env=environment, check=True).stdout
    errors = int((re.search(r"Non-2xx or 3xx responses: (\d+)", out) or [0, 0])[1])
    errors += sum(map(int, re.findall(r"(?:connect|read|write|timeout) (\d+)", out)))
    return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)), errors


def cpu_seconds(pid):
    """A process's CPU time so far, (user, system) in seconds, from /proc/PID/stat."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def wrk_with_cpu(server_pid, url, body=None):
    """wrk(url, body), and the CPU microseconds a request it cost: the server's user and system
    time, and wrk's own (both its threads, user and system), which shares the cores."""
    server_before, wrk_before = cpu_seconds(server_pid), os.times()
    rate, errors = wrk(url, body)
    server_after, wrk_after = cpu_seconds(server_pid), os.times()
    requests = rate * SECONDS
    client = (wrk_after.children_user + wrk_after.children_system) - (wrk_before.children_user + wrk_before.children_system)
    return rate, errors, tuple(1e6 * seconds / requests for seconds in
                               (server_after[0] - server_before[0], server_after[1] - server_before[1], client))


#: Rounds of the measures (the empty GET, the same-sized POST, each read over HTTP, the in-process reads), taken
#: in turn so that each ratio's parts are measured side by side; their medians are compared.
#: Five: on two cores one round's ratio moves by 0.1 or more, and a median of three moved from
#: run to run by more than the target's margin.
ROUNDS = int(os.environ.get("SERVE_BENCH_ROUNDS", "5"))


def inprocess(location, anchors, original, directory):
    """Nanoseconds per call of each read, in-process (`receipt bench-store`), over every core."""
    flags = [flag for anchor in anchors for flag in ("--anchor", str(anchor))]
    return json.loads(subprocess.run([CLI, "bench-store", "--store", str(location), "--subscription", original,
                                      "--verify-receipt-body", str(directory / "store-verify-body.json"), *flags],
                                     capture_output=True, text=True, check=True).stdout)


#: Requests over HTTP (CONNECTIONS at a time), and calls by each of bench-store's 16 tasks, in the
#: small and the large run of each count.
INSTRUCTION_RUNS = ((32, 160), (3, 13))
CONNECTIONS = 16


def callgrind(command, drive=None, env=None, attempts=3):
    """Instructions valgrind's callgrind counts over `command`'s whole life. With `drive`, the
    command is `receipt serve`: drive(port) sends its requests, then the server is stopped.
    A run that has not ended SECONDS_UNDER_CALLGRIND after it should have is killed and made
    again (a server under callgrind, with the machine busy besides, was twice seen not to end
    after SIGTERM; never without valgrind), at most `attempts` times."""
    for _ in range(attempts):
        with tempfile.TemporaryFile("w+") as log:
            process = subprocess.Popen(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command],
                                       stdout=subprocess.PIPE, stderr=log, text=True, env=env)
            if drive:
                line = process.stdout.readline()
                drive(int(re.fullmatch(r"listening on 127\.0\.0\.1:(\d+)\n", line).group(1)))
                process.terminate()
            else:
                process.stdout.read()
            try:
                ended = process.wait(SECONDS_UNDER_CALLGRIND)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                print(f"  ({command[1]} under callgrind did not end; made again)", flush=True)
                continue
            if ended not in (0, -15):
                raise SystemExit(f"{command[0]} under callgrind ended with {ended}")
            log.seek(0)
            return int(re.search(r"refs:\s+([\d,]+)", log.read()).group(1).replace(",", ""))
    raise SystemExit(f"{command[1]} under callgrind did not end {attempts} times")


#: Each run takes 5-20 s under callgrind on a quiet machine.
SECONDS_UNDER_CALLGRIND = 300


def instructions(location, anchors, original, directory):
    """Instructions per request of each read over HTTP and of the empty GET, and per in-process read."""
    flags = [flag for anchor in anchors for flag in ("--anchor", str(anchor))]
    body = (directory / "store-verify-body.json").read_bytes()
    requests = {"empty": ("GET", "/healthz", None), "subscription_read": ("GET", f"/v1/subscriptions/{original}", None),
                "verify_receipt_merged": ("POST", "/sandbox/verifyReceipt", body)}
    serve = serve_command(location, anchors)

    def server(key, count):
        method, path, payload = requests[key]

        def drive(port):
            # 16 connections at once, as bench-store's 16 tasks: a read waiting on PostgreSQL
            # overlaps the others' instead of leaving the server idle (a wake-up a request).
            failures = []

            def send(requests_each):
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
                for _ in range(requests_each):
                    connection.request(method, path, payload, {"Authorization": f"Bearer {READ_TOKEN}"})
                    answer = connection.getresponse()
                    answer.read()
                    if answer.status != 200:
                        failures.append(answer.status)
                connection.close()
            threads = [threading.Thread(target=send, args=(count // CONNECTIONS,)) for _ in range(CONNECTIONS)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            if failures:
                raise SystemExit(f"{path} answered {failures[0]} under callgrind")
        return callgrind(serve, drive, env=dict(os.environ, RECEIPT_READ_TOKEN=READ_TOKEN))

    def inprocess_run(calls, merged):
        extra = ["--verify-receipt-body", str(directory / "store-verify-body.json")] if merged else []
        return callgrind([CLI, "bench-store", "--store", str(location), "--subscription", original,
                          "--samples", "1", "--calls", str(calls), *flags, *extra])

    (low, high), (few, many) = INSTRUCTION_RUNS
    # One process at a time: two on one store would wait on each other's locks.
    served = {(key, count): server(key, count) for key in requests for count in (low, high)}
    counted = {(calls, merged): inprocess_run(calls, merged) for calls in (few, many) for merged in (False, True)}
    per = {key: (served[key, high] - served[key, low]) / (high - low) for key in requests}
    calls = (many - few) * 16  # bench-store: 16 tasks make the calls
    per["work:subscription_read"] = (counted[many, False] - counted[few, False]) / calls
    # The runs with a body make the reads too: what they add over those is the merged answers.
    per["work:verify_receipt_merged"] = ((counted[many, True] - counted[many, False])
                                         - (counted[few, True] - counted[few, False])) / calls
    return per


def print_instructions(location, anchors, original, directory):
    if subprocess.run(["sh", "-c", "command -v valgrind"], capture_output=True).returncode != 0:
        print("  instructions: valgrind is not installed (scripts/install-deps.sh test installs it): skipped")
        return
    per = instructions(location, anchors, original, directory)
    for key, label in (("subscription_read", "GET /v1/subscriptions/{id}"), ("verify_receipt_merged", "POST /verifyReceipt merged")):
        floor = per["empty"] + per["work:" + key]
        print(f"  {label} in instructions (callgrind): {per[key]:,.0f} a request; floor: empty GET /healthz "
              f"{per['empty']:,.0f} + in-process {per['work:' + key]:,.0f} = {floor:,.0f}; "
              f"HTTP / floor = {floor / per[key]:.2f}")


def print_cpu(cpu, median):
    """Where each read's time goes beyond its floor, in CPU: what the read adds over the empty
    GET, to the server's user time (less the in-process work, counted as its time a call over
    every core, which bench-store keeps busy), to its system time, and to wrk's."""
    empty = [statistics.median(spent[part] for spent in cpu["empty"]) for part in range(3)]
    for key, label in (("subscription_read", "GET /v1/subscriptions/{id}"), ("verify_receipt_merged", "POST /verifyReceipt merged")):
        read = [statistics.median(spent[part] for spent in cpu[key]) for part in range(3)]
        work = 1e6 / median["work:" + key] * CORES
        print(f"  {label} in CPU (µs a request, medians; server user + system, wrk): {read[0]:.1f} + {read[1]:.1f}, "
              f"{read[2]:.1f} against the empty GET's {empty[0]:.1f} + {empty[1]:.1f}, {empty[2]:.1f} and the in-process "
              f"{work:.1f}; beyond the floor: server user {read[0] - empty[0] - work:+.1f}, system {read[1] - empty[1]:+.1f}, "
              f"wrk {read[2] - empty[2]:+.1f}")


def row(name, location, bodies, anchors, original, directory, all_in_process=False):
    """One store's rows. `all_in_process`: the store's work is done inside the server's process
    (SQLite), so the CPU lines can set the server's time against the in-process work."""
    process, port = start(location, anchors)
    samples = {"empty": [], "sized": [], "subscription_read": [], "verify_receipt_merged": [],
               "work:subscription_read": [], "work:verify_receipt_merged": []}
    cpu = {"empty": [], "subscription_read": [], "verify_receipt_merged": []}  # (server user, system, wrk) µs a request
    errors = 0
    try:
        rate = ingest(port, bodies)
        base = f"http://127.0.0.1:{port}"
        for _ in range(ROUNDS):
            empty_rate, _, empty_cpu = wrk_with_cpu(process.pid, f"{base}/healthz")
            samples["empty"].append(empty_rate)
            cpu["empty"].append(empty_cpu)
            samples["sized"].append(wrk(f"{base}/sandbox/verifyReceipt", directory / "store-refused-body.json")[0])
            for key, url, body in (("subscription_read", f"{base}/v1/subscriptions/{original}", None),
                                   ("verify_receipt_merged", f"{base}/sandbox/verifyReceipt", directory / "store-verify-body.json")):
                http_rate, failed, spent = wrk_with_cpu(process.pid, url, body)
                samples[key].append(http_rate)
                cpu[key].append(spent)
                errors += failed
            # The server is idle meanwhile: the in-process reads have the cores to themselves.
            for key, nanoseconds in inprocess(location, anchors, original, directory).items():
                samples["work:" + key].append(1e9 / nanoseconds)
    finally:
        process.terminate()
        process.wait(30)
    median = {key: statistics.median(values) for key, values in samples.items()}
    print(f"{name}: ingested {rate:,.0f} notifications/s ({len(bodies)} distinct, 8 clients; assumed Apple peak for "
          f"1,000,000 subscribers: {APPLE_PEAK:,.1f}/s, so {rate / APPLE_PEAK:,.0f}x headroom)")
    empty = median["empty"]
    for key, label in (("subscription_read", "GET /v1/subscriptions/{id}"), ("verify_receipt_merged", "POST /verifyReceipt merged")):
        work = median["work:" + key]  # already over every core (16 at a time)
        floor = 1 / (1 / empty + 1 / work)
        ratio = median[key] / floor
        rounds = ", ".join(f"{http / (1 / (1 / e + 1 / w)):.2f}"
                           for http, e, w in zip(samples[key], samples["empty"], samples["work:" + key]))
        print(f"  {label}: {median[key]:,.0f} req/s ({errors} errors over all reads); floor: empty GET /healthz {empty:,.0f} "
              f"req/s + in-process {work:,.0f}/s (16 at a time, {CORES} cores) = {floor:,.0f} req/s; medians of {ROUNDS} "
              f"rounds taken in turn; HTTP / floor = {ratio:.2f} (rounds: {rounds}) (target >= 0.85): "
              f"{'met' if ratio >= 0.85 else 'NOT met'}")
    if all_in_process:
        print_cpu(cpu, median)
    else:
        print("  in CPU: not shown (the store's work is done in its own processes, which neither the server's time "
              "nor bench-store's counts)")
    # A POST's request carries a body that the empty GET has not: measured, as bench_realtime.sh's
    # floor is, by a POST of the same size that the endpoint refuses at its first byte.
    sized, work = median["sized"], median["work:verify_receipt_merged"]
    rounds = ", ".join(f"{http / (1 / (1 / z + 1 / w)):.2f}"
                       for http, z, w in zip(samples["verify_receipt_merged"], samples["sized"], samples["work:verify_receipt_merged"]))
    print(f"  POST /verifyReceipt merged against the same-sized POST refused at its first byte ({sized:,.0f} req/s) instead of "
          f"the empty GET: floor {1 / (1 / sized + 1 / work):,.0f} req/s; HTTP / floor = "
          f"{median['verify_receipt_merged'] * (1 / sized + 1 / work):.2f} (rounds: {rounds})")
    print_instructions(location, anchors, original, directory)


def main():
    directory = pathlib.Path(sys.argv[1])
    directory.mkdir(parents=True, exist_ok=True)
    bodies, anchors, original = mint_inputs(directory)
    print(f"assumed Apple peak: 1,000,000 subscribers / 30 days x 2 notifications per renewal, a day's within one hour "
          f"= {APPLE_PEAK:,.1f} notifications/s")
    with tempfile.TemporaryDirectory() as scratch:
        row("SQLite", pathlib.Path(scratch) / "bench.db", bodies, anchors, original, directory, all_in_process=True)
    if postgres_cluster.server_binaries() is None:
        print("PostgreSQL: not installed (scripts/install-deps.sh test installs it): row skipped")
        return
    with postgres_cluster.cluster() as url:
        row("PostgreSQL", url, bodies, anchors, original, directory)


if __name__ == "__main__":
    main()
