"""Verifies the receipts of a Parquet file on Spark and writes the verdicts and the exploded
purchases as Parquet.

    python3 examples/spark/verify_receipts.py INPUT.parquet OUTPUT_DIR [--column receipt]
        [--bundle-id ID] [--environment production|sandbox] [--allow-xcode] [--anchor CERT]...
    (or the same through spark-submit on a cluster; see the module's documentation)

INPUT.parquet has a column of receipts, DER bytes (binary) or base64 text (string); any other
columns are carried along. OUTPUT_DIR gets verdicts/ and purchases/. `make_input.py` makes an
input from receipt files."""
import argparse
import os
import sys

from pyspark.sql import SparkSession

from libreceipt import spark as receipt_spark


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--column", default="receipt")
    parser.add_argument("--bundle-id")
    parser.add_argument("--environment", choices=["production", "sandbox"])
    parser.add_argument("--allow-xcode", action="store_true")
    parser.add_argument("--anchor", action="append", default=[])
    args = parser.parse_args(argv)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # workers in this interpreter's environment
    spark = (SparkSession.builder.appName("libreceipt: verify receipts")
             .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    options = {"bundle_id": args.bundle_id, "environment": args.environment, "allow_xcode": args.allow_xcode,
               "anchors": [open(path, "rb").read() for path in args.anchor]}
    receipts = spark.read.parquet(args.input)
    verdicts = receipt_spark.receipts(receipts, args.column, **options).drop(args.column)
    verdicts.write.mode("overwrite").parquet(os.path.join(args.output, "verdicts"))
    purchases = receipt_spark.purchases(receipts, args.column, **options)
    purchases.write.mode("overwrite").parquet(os.path.join(args.output, "purchases"))
    counts = verdicts.groupBy("status").count().collect()
    print(", ".join(f"{row['count']} {row['status']}" for row in sorted(counts, key=lambda row: row["status"])))
    spark.stop()


if __name__ == "__main__":
    main()
