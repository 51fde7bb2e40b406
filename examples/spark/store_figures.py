"""Recomputes receipt serve's figures on Spark from a PostgreSQL store's rows, read over JDBC
(Debian's libpostgresql-jdbc-java gives the driver), with the SQL the server itself runs
(`receipt stats-sql`), so that a data team's numbers and GET /v1/stats agree by construction.

    python3 examples/spark/store_figures.py jdbc:postgresql://HOST:PORT/DATABASE --user receipt
        [--password-file FILE] [--figure subscriptions|mrr] [--at MS|DATE] [--product ID]
        [--jdbc-jar /usr/share/java/postgresql.jar] [--receipt receipt]

Prints one JSON object per row: for subscriptions {"product_id", "status", "status_name",
"count"}; for mrr {"currency", "period_ms", "subscriptions", "price_sum_milliunits"} (the
groups GET /v1/stats/mrr makes MRR from). The store's fact columns are read as they are: a
copy taken with pg_dump, or the tables exported to Parquet and registered under the same
names, works the same (`figures(spark, ...)` with `tables` already registered)."""
import argparse
import json
import os
import subprocess
import sys

#: Apple's subscription statuses, as the first figure numbers them.
STATUS_NAMES = {1: "active", 2: "expired", 3: "billing_retry", 4: "grace_period", 5: "revoked"}
#: The tables the figures read.
TABLES = ("transactions", "renewal_infos")
DEFAULT_JAR = "/usr/share/java/postgresql.jar"


def register_store(spark, jdbc_url, properties):
    """The store's tables as Spark views of the same names, read over JDBC."""
    for name in TABLES:
        spark.read.jdbc(jdbc_url, name, properties=dict(properties, driver="org.postgresql.Driver")) \
            .createOrReplaceTempView(name)


def figure_sql(figure, at=None, product=None, receipt="receipt"):
    """The statement receipt serve runs for `figure`, from `receipt stats-sql`."""
    command = [receipt, "stats-sql", figure] + (["--at", str(at)] if at is not None else []) \
        + (["--product", product] if product else [])
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def figures(spark, figure, at=None, product=None, receipt="receipt"):
    """The figure's rows, as dicts, computed by Spark over the registered tables."""
    rows = spark.sql(figure_sql(figure, at, product, receipt)).collect()
    if figure == "subscriptions":
        return [{"product_id": row[0], "status": int(row[1]), "status_name": STATUS_NAMES[int(row[1])], "count": int(row[2])}
                for row in rows]
    return [{"currency": row[0], "period_ms": int(row[1]), "subscriptions": int(row[2]), "price_sum_milliunits": int(row[3])}
            for row in rows]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("jdbc_url")
    parser.add_argument("--user", default="receipt")
    parser.add_argument("--password-file", help="a file holding the database password (never on the command line)")
    parser.add_argument("--figure", default="subscriptions", choices=["subscriptions", "mrr"])
    parser.add_argument("--at", help="epoch milliseconds or a date (2026-11-27); now when omitted")
    parser.add_argument("--product")
    parser.add_argument("--jdbc-jar", default=DEFAULT_JAR)
    parser.add_argument("--receipt", default="receipt", help="the receipt program")
    args = parser.parse_args(argv)
    from pyspark.sql import SparkSession
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spark = (SparkSession.builder.appName("libreceipt: store figures").config("spark.jars", args.jdbc_jar)
             .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.ui.enabled", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    properties = {"user": args.user}
    if args.password_file:
        with open(args.password_file) as file:
            properties["password"] = file.read().strip()
    register_store(spark, args.jdbc_url, properties)
    for row in figures(spark, args.figure, args.at, args.product, args.receipt):
        print(json.dumps(row))
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
