#!/usr/bin/env python3
"""Spark row: rows per second per core through libreceipt.spark.receipts in local[2] against
Verifier.verify_bytes in one thread in this process, on the same rows (copies of the given
receipts). Spark's session start is not timed; one warm-up job runs first. SPARK_BATCH sets Spark's
spark.sql.execution.arrow.maxRecordsPerBatch (2000 unless given).

    bench_spark.py COPIES ANCHOR_OR_- FILE...
"""
import sys
import time


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
    start = time.perf_counter()
    valid = sum(verifier.verify_bytes(data).valid for _, data in rows)
    in_process = copies / (time.perf_counter() - start)

    spark = (SparkSession.builder.master("local[2]").config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.bindAddress", "127.0.0.1").appName("libreceipt-bench").config("spark.ui.enabled", "false")
             .config("spark.sql.execution.arrow.maxRecordsPerBatch", os.environ.get("SPARK_BATCH", "2000")).getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    df = spark.createDataFrame(rows, "id long, receipt binary").repartition(2).cache()
    df.count()
    verdicts = receipt_spark.receipts(df, "receipt", **options)
    verdicts.write.format("noop").mode("overwrite").save()  # warm-up: workers started, verifiers made
    start = time.perf_counter()
    verdicts.write.format("noop").mode("overwrite").save()
    per_core = copies / (time.perf_counter() - start) / 2
    # Spark alone on the same cached rows, no Python worker: the floor under any mapInArrow.
    start = time.perf_counter()
    df.write.format("noop").mode("overwrite").save()
    spark_alone = (time.perf_counter() - start) * 2 / copies * 1e6  # microseconds of the two cores per row
    assert verdicts.where("valid").count() == valid == copies, "every row must verify for the figure to mean anything"
    spark.stop()
    print(f"spark local[2]: {copies} receipts ({len(files)} distinct): {per_core:,.0f} rows/s per core; "
          f"in-process verify_bytes, one thread: {in_process:,.0f} rows/s; ratio {per_core / in_process:.2f} "
          f"(target >= 0.8)")
    budget = 1e6 / (0.8 * in_process) - 1e6 / in_process
    print(f"  per row, of the two cores: {1e6 / per_core:.1f} us through Spark, {1e6 / in_process:.1f} us in-process; "
          f"Spark scanning the cached rows with no Python at all: {spark_alone:.1f} us "
          f"(0.8x leaves {budget:.1f} us for everything but the verification)")


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3:])
