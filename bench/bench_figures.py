"""The figures of `make bench`: GET /v1/stats/subscriptions, /v1/stats/mrr, /v1/stats/flows,
/v1/stats/revenue, /v1/stats/rates, /v1/stats/cohorts, /v1/stats/churn, /v1/stats/active and /v1/stats/mrr_movement (a year by month) and /dashboard on a synthetic store, SQLite and PostgreSQL (a throwaway
cluster, when Debian's postgresql is installed).

The store holds FIGURES_BENCH_SUBSCRIPTIONS subscriptions (20,000 by default; #32's target is
1,000,000) with a history over two years: monthly and yearly plans in two currencies, a
free trial for a third of them, about one in twenty periods ending the subscription (by
cancelling, or by a billing failure, some of them in billing retry or a grace period now),
and one period in fifty refunded. The rows are written straight into the store's tables with
their fact columns, and a placeholder where the JWS goes: unsigned rows, for this bench only
(the server never reads the JWS for a figure); the server's migration then makes what the
figures read (timed): the summary of each subscription, the periods begun per day and the
subscriptions active per day. Each endpoint is asked five times; the median
is printed against #32's target of 1 s for a figure (200 ms for the page).

    bench_figures.py
"""
import csv
import http.client
import os
import pathlib
import random
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "Tests" / "python")]
import postgres_cluster  # noqa: E402
from store_tables import downgrade_to_schema_5  # noqa: E402

CLI = os.environ.get("RECEIPT_CLI", str(ROOT / "build" / "bin" / "receipt"))
SUBSCRIPTIONS = int(os.environ.get("FIGURES_BENCH_SUBSCRIPTIONS", "20000"))
READ_TOKEN = "bench-read-token-of-22-chars"
DAY = 86_400_000
TRANSACTION_COLUMNS = ("transaction_id", "original_transaction_id", "product_id", "app_account_token", "signed_date", "jws",
                       "purchase_date", "original_purchase_date", "expires_date", "revocation_date", "revocation_reason",
                       "product_type", "environment", "transaction_reason", "offer_discount_type", "price", "currency")
RENEWAL_COLUMNS = ("original_transaction_id", "signed_date", "jws", "auto_renew_status", "product_id", "expiration_intent",
                   "is_in_billing_retry_period", "grace_period_expires_date", "currency", "environment")


def history(now):
    """(transactions, renewal infos) rows of the synthetic store, made the same way every run."""
    rng = random.Random(32)
    transactions, renewals = [], []
    for index in range(SUBSCRIPTIONS):
        original = 5_000_000_000_000_000 + index * 1000
        yearly = rng.random() < 0.2
        length = 365 * DAY if yearly else 30 * DAY
        product = "com.example.bench.yearly" if yearly else "com.example.bench.monthly"
        currency, price = ("EUR", 39_990 if yearly else 4_490) if rng.random() < 0.3 else ("USD", 49_990 if yearly else 4_990)
        start = now - rng.randrange(730) * DAY
        purchase, period, intent, retry, grace = start, 0, None, 0, None
        trial = rng.random() < 0.33
        while purchase < now:
            first = period == 0
            is_trial = first and trial
            expires = purchase + (7 * DAY if is_trial else length)
            refunded = not is_trial and rng.random() < 0.02
            transactions.append((str(original + period), str(original), product, None, purchase, "bench", purchase, start,
                                 expires, purchase + 3 * DAY if refunded else None, 0 if refunded else None,
                                 "Auto-Renewable Subscription", "Production", "PURCHASE" if first else "RENEWAL",
                                 "FREE_TRIAL" if is_trial else None, 0 if is_trial else price, currency))
            period += 1
            if rng.random() < 0.05:
                intent = rng.choice((1, 1, 2))
                if intent == 2 and expires > now - 60 * DAY:
                    retry, grace = 1, expires + 16 * DAY
                break
            purchase = expires + (rng.randrange(1, 5) * DAY if rng.random() < 0.03 else 0)  # a late renewal: a recovery
        renewals.append((str(original), now - DAY, "bench", 0 if intent else 1, product, intent, retry, grace, currency,
                         "Production"))
    return transactions, renewals


def start(store):
    process = subprocess.Popen([CLI, "serve", "--port", "0", "--store", str(store), "--bundle-id", "com.example.bench",
                                "--environment", "production", "--app-apple-id", "1234567890"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               env=dict(os.environ, RECEIPT_READ_TOKEN=READ_TOKEN))
    line = process.stdout.readline()
    match = re.fullmatch(r"listening on 127\.0\.0\.1:(\d+)\n", line)
    if not match:
        process.kill()
        raise SystemExit(f"serve did not start: {line!r}")
    return process, int(match.group(1))


def stop(process):
    process.terminate()
    process.wait(30)


def fill_sqlite(path, transactions, renewals):
    with sqlite3.connect(path) as connection:
        connection.executemany(f"INSERT INTO transactions ({', '.join(TRANSACTION_COLUMNS)}) VALUES "
                               f"({', '.join('?' * len(TRANSACTION_COLUMNS))})", transactions)
        connection.executemany(f"INSERT INTO renewal_infos ({', '.join(RENEWAL_COLUMNS)}) VALUES "
                               f"({', '.join('?' * len(RENEWAL_COLUMNS))})", renewals)
        connection.execute("ANALYZE")


def fill_postgres(url, transactions, renewals, scratch):
    for table, columns, rows in (("transactions", TRANSACTION_COLUMNS, transactions),
                                 ("renewal_infos", RENEWAL_COLUMNS, renewals)):
        path = pathlib.Path(scratch) / f"{table}.csv"
        with open(path, "w", newline="") as file:
            csv.writer(file).writerows(["" if value is None else value for value in row] for row in rows)
        subprocess.run(["psql", url, "-q", "-c", f"\\copy {table} ({', '.join(columns)}) FROM '{path}' WITH (FORMAT csv)"],
                       check=True)
    subprocess.run(["psql", url, "-q", "-c", "ANALYZE"], check=True)


def timed(port, path, times=5):
    """The median milliseconds of `times` requests of `path`, and the last answer's size."""
    samples, size = [], 0
    for _ in range(times):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        began = time.perf_counter()
        connection.request("GET", path, headers={"Authorization": f"Bearer {READ_TOKEN}"})
        answer = connection.getresponse()
        body = answer.read()
        samples.append((time.perf_counter() - began) * 1000)
        connection.close()
        if answer.status != 200:
            raise SystemExit(f"{path}: HTTP {answer.status} {body[:300]!r}")
        size = len(body)
    return statistics.median(samples), size


def row(name, store, fill):
    process, _ = start(store)  # makes the schema
    stop(process)
    now = int(time.time() * 1000)
    began = time.perf_counter()
    transactions, renewals = history(now)
    fill(transactions, renewals)
    print(f"{name}: {SUBSCRIPTIONS:,} subscriptions, {len(transactions):,} transactions "
          f"({len(transactions) / SUBSCRIPTIONS:.1f} each), made and stored in {time.perf_counter() - began:.0f} s")
    # The rows went in behind the server's back: its summaries (schema 6), periods begun per day
    # (schema 7, per currency since 12, with the rates' counts since 13), summaries per expiry day (schema 8) and the
    # subscriptions active per day (schema 14, per currency, length and trial since 15) are made again by the migration, as for a
    # store of schema 5 upgraded in place, timed.
    downgrade_to_schema_5(store)
    began = time.perf_counter()
    process, port = start(store)
    print(f"  migration to the current schema (a summary per subscription, periods numbered, periods begun per day and "
          f"currency with the rates' counts, summaries per expiry day and subscriptions active per day counted) and start: "
          f"{time.perf_counter() - began:.1f} s")
    try:
        year = f"from={now - 365 * DAY}&to={now}"
        for path, target in ((f"/v1/stats/subscriptions?at={now}", 1000), (f"/v1/stats/mrr?at={now}", 1000),
                             (f"/v1/stats/flows?{year}&at={now}&by=month", 1000), (f"/v1/stats/revenue?{year}&by=month", 1000),
                             (f"/v1/stats/rates?{year}&by=month", 1000), (f"/v1/stats/cohorts?{year}&by=month", 1000),
                             (f"/v1/stats/churn?{year}&at={now}&by=month", 1000), (f"/v1/stats/active?{year}&by=month", 1000),
                             (f"/v1/stats/active?{year}&by=day", 1000), (f"/v1/stats/mrr_movement?{year}&by=month", 1000),
                             (f"/dashboard?{year}&at={now}&by=month", 200)):
            median, size = timed(port, path)
            print(f"  GET {path.split('?')[0]}{' by day' if 'by=day' in path else ''}: {median:,.0f} ms (median of 5; {size:,} bytes; target <= {target} ms at "
                  f"1,000,000 subscriptions)")
        # Half a year ago: periods were bought after it, so the rows are read as of it (no kept counts yet, #60).
        for path in (f"/v1/stats/subscriptions?at={now - 182 * DAY}", f"/v1/stats/mrr?at={now - 182 * DAY}"):
            median, size = timed(port, path)
            print(f"  GET {path.split('?')[0]} half a year ago, from the rows as of then: {median:,.0f} ms (median of 5; "
                  f"{size:,} bytes)")
    finally:
        stop(process)


def main():
    with tempfile.TemporaryDirectory() as scratch:
        path = pathlib.Path(scratch) / "figures.db"
        row("SQLite", path, lambda transactions, renewals: fill_sqlite(path, transactions, renewals))
        if postgres_cluster.server_binaries() is None:
            print("PostgreSQL: not installed (scripts/install-deps.sh test installs it): row skipped")
            return
        with postgres_cluster.cluster() as url:
            row("PostgreSQL", url, lambda transactions, renewals: fill_postgres(url, transactions, renewals, scratch))


if __name__ == "__main__":
    main()
