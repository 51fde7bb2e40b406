#!/usr/bin/env python3
"""Spark row: libreceipt.spark.receipts() and purchases() in local[2] against the composition floor,
measured in the same run on the same cached rows (copies of the given receipts):

  floor = Spark's identity mapInArrow over the rows (Spark, Arrow and a Python worker, doing nothing)
        + the in-process verification (Verifier.verify_bytes, warm) spread over the two cores.

No Spark job can verify the rows in less. Target: receipts() >= 0.85 x that floor. purchases() is
printed against the same floor (it also writes a row per purchase). Spark's session start is not
timed; one warm-up job of each kind runs first. SPARK_BATCH sets Spark's
spark.sql.execution.arrow.maxRecordsPerBatch (2000 unless given).

    bench_spark.py COPIES ANCHOR_OR_- FILE...      (make bench: 150,000 rows)
"""
import sys
import time

CORES = 2
TARGET = 0.85


def timed(job):
    start = time.perf_counter()
    job()
    return time.perf_counter() - start


def main(copies, anchor, files):
    import os
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    import libreceipt
    from libreceipt import spark as receipt_spark
    from pyspark.sql import SparkSession

    receipts = [open(path, "rb").read() for path in files]
    rows = [(index, receipts[index % len(receipts)]) for index in range(copies)]
    options = {"allow_xcode": True}
    if anchor != "-":
        options["anchors"] = [open(anchor, "rb").read()]
    verifier = libreceipt.Verifier(**options)
    for data in receipts:  # warm: chains cached, as every Spark worker's verifier is after its first rows
        verifier.verify_bytes(data)
    sample = rows[:min(copies, 30000)]
    seconds = timed(lambda: [verifier.verify_bytes(data) for _, data in sample])
    in_process = len(sample) / seconds  # verifications/s on one core
    purchases_per_row = sum(len(libreceipt.Receipt(data).purchases) for data in receipts) / len(receipts)

    spark = (SparkSession.builder.master(f"local[{CORES}]").config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.bindAddress", "127.0.0.1").appName("libreceipt-bench").config("spark.ui.enabled", "false")
             .config("spark.sql.execution.arrow.maxRecordsPerBatch", os.environ.get("SPARK_BATCH", "2000")).getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    df = spark.createDataFrame(rows, "id long, receipt binary").repartition(CORES).cache()
    df.count()

    def sink(frame):
        return lambda: frame.write.format("noop").mode("overwrite").save()

    identity = df.mapInArrow(lambda batches: batches, df.schema)
    verdicts = receipt_spark.receipts(df, "receipt", **options)
    exploded = receipt_spark.purchases(df, "receipt", **options)
    for frame in (identity, verdicts, exploded):  # warm-up: workers started, verifiers made
        sink(frame)()
    identity_seconds = min(timed(sink(identity)) for _ in range(2))
    receipts_seconds = timed(sink(verdicts))
    purchases_seconds = timed(sink(exploded))
    scan_seconds = timed(sink(df))  # Spark alone, no Python worker
    assert verdicts.where("valid").count() == copies, "every row must verify for the figure to mean anything"
    spark.stop()

    verification_seconds = copies / (in_process * CORES)
    floor_seconds = identity_seconds + verification_seconds
    floor = copies / floor_seconds
    ratio = floor_seconds / receipts_seconds
    print(f"spark local[{CORES}]: {copies:,} rows ({len(files)} distinct receipts, {purchases_per_row:.1f} purchases each)")
    print(f"  floor: identity mapInArrow {identity_seconds:.2f} s + verification over {CORES} cores "
          f"{verification_seconds:.2f} s (in-process {in_process:,.0f}/s on one core) = {floor:,.0f} rows/s")
    print(f"  receipts():  {copies / receipts_seconds:,.0f} rows/s = {ratio:.2f} x the floor "
          f"(target >= {TARGET}): {'met' if ratio >= TARGET else 'NOT met'}")
    print(f"  purchases(): {copies / purchases_seconds:,.0f} input rows/s, "
          f"{copies * purchases_per_row / purchases_seconds:,.0f} purchase rows/s = "
          f"{floor_seconds / purchases_seconds:.2f} x the floor")
    print(f"  per row, of the {CORES} cores: Spark scanning the cached rows with no Python "
          f"{scan_seconds * CORES / copies * 1e6:.1f} us, the identity mapInArrow "
          f"{identity_seconds * CORES / copies * 1e6:.1f} us, receipts() {receipts_seconds * CORES / copies * 1e6:.1f} us, "
          f"one verification {1e6 / in_process:.1f} us")


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3:])
