"""libreceipt.spark in Spark's local[2] mode: every shared receipt's row against expected.jsonl,
the exploded purchases against its in-app entries, minted receipts, bad rows that give a
status without failing the job, and StoreKit 2 JWS (minted and shared) beside receipts. Skipped, by name, where PySpark or Java is not installed."""
import base64
import json
import shutil
import sys

import pytest

import libreceipt
from libreceipt.batch import verify_many
from conftest import ROOT

pyspark = pytest.importorskip("pyspark", reason="PySpark is not installed in the test venv")
if not shutil.which("java"):
    pytest.skip("no java on PATH: Spark tests skipped", allow_module_level=True)

from libreceipt import spark as receipt_spark  # noqa: E402
from test_notifications import mint_jws, news_ca, now, postgres  # noqa: E402,F401 (fixtures)

#: Debian's PostgreSQL JDBC driver (libpostgresql-jdbc-java; scripts/install-deps.sh test installs it).
POSTGRESQL_JDBC_JAR = "/usr/share/java/postgresql.jar"


@pytest.fixture(scope="module")
def session():
    import os
    from pyspark.sql import SparkSession
    import sys
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"  # Spark on loopback only
    os.environ["PYSPARK_PYTHON"] = sys.executable  # workers in this venv, which has pyarrow and libreceipt
    spark = (SparkSession.builder.master("local[2]").config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.bindAddress", "127.0.0.1").appName("libreceipt-tests")
             .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
             .config("spark.jars", POSTGRESQL_JDBC_JAR)  # the store's figures, read over JDBC
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    yield spark
    spark.stop()


def expected_rows(shared):
    return {row["file"]: row for row in map(json.loads, (shared / "expected.jsonl").read_text().splitlines())}


def test_batch_call_gives_a_row_per_input_and_never_fails(minted, test_ca):
    verifier = libreceipt.Verifier(apple_root=False, anchors=[(test_ca / "root.pem").read_bytes()])
    der = minted["der"].read_bytes()
    rows, purchases = verify_many(verifier, [der, base64.b64encode(der).decode(), b"", None, b"garbage"],
                                  with_purchases=True)
    assert [row["status"] for row in rows] == ["RECEIPT_OK", "RECEIPT_OK", "RECEIPT_E_EMPTY_INPUT",
                                               "RECEIPT_E_NULL_ARGUMENT", "RECEIPT_E_BAD_BASE64"]
    assert [row["valid"] for row in rows] == [True, True, False, False, False]
    assert rows[0]["bundle_id"] == "com.example.minted" and rows[0]["in_app_count"] == 3
    assert rows[2]["bundle_id"] is None and rows[2]["receipt_creation_date_ms"] is None
    assert [row for row, _ in purchases] == [0, 0, 0, 1, 1, 1]
    first = {entry["transaction_id"]: entry for row, entry in purchases if row == 0}
    assert sorted(first) == ["1000000000", "1000000001", "1000000002"]
    assert first["1000000000"]["is_trial_period"] is True and first["1000000001"]["is_trial_period"] is False
    assert first["1000000000"]["cancellation_date_ms"] is None and first["1000000000"]["quantity"] == 1


def test_every_shared_receipt_row_equals_the_independent_decoder(session, shared):
    expected = expected_rows(shared)
    files = sorted(expected)
    df = session.createDataFrame([(name, (shared / "receipts" / name).read_bytes()) for name in files],
                                 "file string, receipt binary")
    rows = {row.file: row for row in receipt_spark.receipts(df, "receipt", allow_xcode=True).collect()}
    assert sorted(rows) == files
    for name in files:
        row, want = rows[name], expected[name]
        assert row.valid, (name, row.status)
        assert row.status == "RECEIPT_OK"
        assert (row.bundle_id, row.application_version, row.original_application_version, row.receipt_type) == (
            want["bundle_id"], want["application_version"], want.get("original_application_version"),
            want["receipt_type"]), name
        assert row.in_app_count == want["in_app_count"], name
        single = libreceipt.Receipt((shared / "receipts" / name).read_bytes())
        created = single.receipt_creation_date
        assert row.receipt_creation_date_ms == (created.ms if created else None), name


def test_purchases_equal_the_in_app_entries(session, shared):
    expected = expected_rows(shared)
    df = session.createDataFrame([(name, base64.b64encode((shared / "receipts" / name).read_bytes()).decode())
                                  for name in sorted(expected)], "file string, receipt string")
    exploded = receipt_spark.purchases(df, "receipt", allow_xcode=True).collect()
    for name, want in expected.items():
        mine = [row for row in exploded if row.file == name]
        assert len(mine) == want["in_app_count"], name
        assert [row.transaction_id for row in mine] == [entry.get("transaction_id") for entry in want["in_app"]], name
        assert [row.product_id for row in mine] == [entry.get("product_id") for entry in want["in_app"]], name
        assert all(row.valid for row in mine), name


def test_bad_rows_give_a_status_and_the_job_goes_on(session, minted, test_ca):
    good = minted["der"].read_bytes()
    df = session.createDataFrame([(1, good), (2, b""), (3, None), (4, b"\x30\x84garbage"), (5, b"not a receipt")],
                                 "id int, receipt binary")
    anchors = [(test_ca / "root.pem").read_bytes()]
    rows = {row.id: row for row in receipt_spark.receipts(df, "receipt", anchors=anchors).collect()}
    assert rows[1].valid and rows[1].status == "RECEIPT_OK" and rows[1].in_app_count == 3
    assert rows[2].status == "RECEIPT_E_EMPTY_INPUT" and rows[3].status == "RECEIPT_E_NULL_ARGUMENT"
    assert rows[4].status.startswith("RECEIPT_E_") and not rows[4].valid and rows[4].bundle_id is None
    assert not rows[5].valid
    untrusted = receipt_spark.receipts(df, "receipt").where("id = 1").collect()[0]
    assert untrusted.status == "RECEIPT_E_CHAIN_UNTRUSTED" and untrusted.bundle_id == "com.example.minted"
    wrong_bundle = receipt_spark.receipts(df, "receipt", anchors=anchors, bundle_id="com.other").where("id = 1")
    assert wrong_bundle.collect()[0].status == "RECEIPT_E_BUNDLE_MISMATCH"
    exploded = receipt_spark.purchases(df, "receipt", anchors=anchors).collect()
    assert len(exploded) == 3 and {row.id for row in exploded} == {1}


def test_column_type_and_name_clashes_are_refused(session):
    df = session.createDataFrame([(1, "x")], "receipt int, valid string")
    with pytest.raises(TypeError):
        receipt_spark.receipts(df, "receipt")
    df = session.createDataFrame([("x", "y")], "receipt string, valid string")
    with pytest.raises(ValueError):
        receipt_spark.receipts(df, "receipt")


# ---------------------------------------------------------------- StoreKit 2 JWS beside receipts

def test_batch_call_reads_a_jws_beside_a_receipt(minted, test_ca, jws_ca):
    sys.path.insert(0, str(ROOT / "tools"))
    import mint_jws
    jws_root, chains = jws_ca
    payload = mint_jws.example_payload()
    token = mint_jws.sign(payload, chains)
    verifier = libreceipt.Verifier(apple_root=False, anchors=[(test_ca / "root.pem").read_bytes(), jws_root.read_bytes()])
    rows, purchases = verify_many(verifier, [token, minted["der"].read_bytes(), mint_jws.sign(payload, chains, "payload-changed")],
                                  with_purchases=True)
    assert [row["status"] for row in rows] == ["RECEIPT_OK", "RECEIPT_OK", "RECEIPT_E_SIGNATURE_INVALID"]
    assert (rows[0]["bundle_id"], rows[0]["receipt_type"], rows[0]["receipt_creation_date_ms"], rows[0]["in_app_count"]) == (
        payload["bundleId"], payload["environment"], payload["signedDate"], 1)
    assert rows[0]["application_version"] is None and rows[1]["in_app_count"] == 3
    assert [row for row, _ in purchases] == [0, 1, 1, 1, 2]
    assert purchases[0][1] == {
        "product_id": payload["productId"], "transaction_id": payload["transactionId"],
        "original_transaction_id": payload["originalTransactionId"], "purchase_date_ms": payload["purchaseDate"],
        "original_purchase_date_ms": payload["originalPurchaseDate"], "expires_date_ms": payload["expiresDate"],
        "cancellation_date_ms": None, "quantity": payload["quantity"],
        "web_order_line_item_id": int(payload["webOrderLineItemId"]), "is_trial_period": False,
        "is_in_intro_offer_period": False}
    notification = mint_jws.example_payload("notification")
    notification["data"]["signedTransactionInfo"] = token
    plain = mint_jws.example_payload("notification")
    rows, purchases = verify_many(verifier, [mint_jws.sign(notification, chains), mint_jws.sign(plain, chains)],
                                  with_purchases=True)
    assert [(row["status"], row["in_app_count"], row["bundle_id"]) for row in rows] == [
        ("RECEIPT_OK", 1, "com.example.minted"), ("RECEIPT_OK", 0, "com.example.minted")]
    assert [(row, entry["transaction_id"]) for row, entry in purchases] == [(0, payload["transactionId"])]
    trial = dict(payload, offerType=1, offerDiscountType="FREE_TRIAL", revocationDate=payload["signedDate"])
    _, [(_, entry)] = verify_many(verifier, [mint_jws.sign(trial, chains)], with_purchases=True)
    assert (entry["is_trial_period"], entry["is_in_intro_offer_period"], entry["cancellation_date_ms"]) == (
        True, False, payload["signedDate"])


def _transaction_of(payload):
    """The signed transaction a row explodes to, decoded here independently: the payload itself,
    or the JWS a notification carries in data.signedTransactionInfo."""
    if "notificationType" not in payload:
        return payload if "transactionId" in payload else None
    nested = payload.get("data", {}).get("signedTransactionInfo")
    if nested is None:
        return None
    segment = nested.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))


def _jws_expectation(payload):
    """What a row of this payload holds, read from the independent decode in expected.jsonl."""
    data = payload.get("data", {})
    return (payload.get("bundleId") or data.get("bundleId"),
            payload.get("environment") or payload.get("receiptType") or data.get("environment"))


def test_every_shared_jws_row_and_purchase_equals_its_payload(session, shared_jws):
    expected = {row["file"]: row for row in map(json.loads, (shared_jws / "expected.jsonl").read_text().splitlines())}
    df = session.createDataFrame([(name, (shared_jws / ("xcode" if row["x5c"] == 1 else "apple") / name).read_text())
                                  for name, row in sorted(expected.items())], "file string, token string")
    rows = {row.file: row for row in receipt_spark.receipts(df, "token").collect()}
    exploded = receipt_spark.purchases(df, "token").collect()
    assert sorted(rows) == sorted(expected) and len(rows) == 25
    for name, want in expected.items():
        row, payload = rows[name], want["payload"]
        mine = [entry for entry in exploded if entry.file == name]
        if payload is None:
            assert (row.status, row.valid, row.bundle_id, mine) == ("RECEIPT_E_NOT_AN_OBJECT", False, None, []), name
            continue
        # Apple's verify at their signing dates; Xcode's chains only with their own anchor.
        assert row.valid == (want["x5c"] == 3), (name, row.status)
        assert (row.bundle_id, row.receipt_type) == _jws_expectation(payload), name
        assert row.receipt_creation_date_ms == int(want["signed_ms"]), name
        transaction = _transaction_of(payload)
        assert row.in_app_count == len(mine) == (0 if transaction is None else 1), name
        if transaction is not None:
            entry = mine[0]
            assert (entry.product_id, entry.transaction_id, entry.original_transaction_id, entry.quantity) == (
                transaction["productId"], transaction["transactionId"], transaction["originalTransactionId"],
                transaction.get("quantity")), name
            assert (entry.purchase_date_ms, entry.expires_date_ms, entry.cancellation_date_ms) == (
                int(transaction["purchaseDate"]), transaction.get("expiresDate") and int(transaction["expiresDate"]),
                transaction.get("revocationDate")), name
            assert entry.valid == row.valid, name
    # Apple's samples hold transactions alone and inside notifications: both explode.
    assert sum(1 for entry in exploded if "notification" in entry.file) >= 10
    assert sum(1 for entry in exploded if entry.file.endswith("_transaction.jws")) >= 5


def test_purchases_of_a_large_receipt_in_many_rows_do_not_copy_it(session, mint, test_ca):
    # Before: every purchase row copied its receipt, so 1,500 rows of one 187-purchase receipt
    # (~40 KB) asked Arrow for ~11 GB of binary column and failed ("Take operation overflowed").
    receipt = mint("--purchases", "187").read_bytes()
    rows = 1500
    df = session.createDataFrame([(index, receipt) for index in range(rows)], "id int, receipt binary").coalesce(1)
    anchors = [(test_ca / "root.pem").read_bytes()]
    exploded = receipt_spark.purchases(df, "receipt", anchors=anchors)
    assert "receipt" not in exploded.columns and {"id", "valid", "fingerprint", "transaction_id"} <= set(exploded.columns)
    summary = exploded.groupBy("fingerprint", "valid").count().collect()
    assert len(summary) == 1 and summary[0]["valid"] and summary[0]["count"] == rows * 187
    assert summary[0]["fingerprint"] == libreceipt.Receipt(receipt).fingerprint
    per_row = exploded.groupBy("id").count().collect()
    assert len(per_row) == rows and {row["count"] for row in per_row} == {187}


def test_the_stores_figures_recomputed_on_spark_over_jdbc_equal_the_api(session, tmp_path, news_ca, test_ca, mint_jws, now,
                                                                       postgres):
    """examples/spark/store_figures.py: Spark reads a PostgreSQL store's tables over JDBC and runs
    the SQL the server runs (`receipt stats-sql`): subscriptions by product and status, and
    MRR's price groups, equal GET /v1/stats/subscriptions and /v1/stats/mrr on the same rows."""
    import os
    import pathlib
    import subprocess
    if not pathlib.Path(POSTGRESQL_JDBC_JAR).exists():
        if os.environ.get("CI"):
            pytest.fail("libpostgresql-jdbc-java is not installed: scripts/install-deps.sh test installs it")
        pytest.skip("libpostgresql-jdbc-java is not installed (scripts/install-deps.sh test)")
    from test_serve import CLI
    from test_store_facts import shaped_server
    sys.path.insert(0, str(ROOT / "examples" / "spark"))
    import store_figures

    def new_store():
        subprocess.run(["psql", postgres, "-q", "-c", "CREATE DATABASE spark_figures"], check=True)
        return postgres.rsplit("/", 1)[0] + "/spark_figures"

    server, states = shaped_server(tmp_path, news_ca, test_ca, mint_jws, now, new_store)
    try:
        host = server.location.split("@", 1)[1]  # 127.0.0.1:PORT/spark_figures
        store_figures.register_store(session, f"jdbc:postgresql://{host}", {"user": "receipt"})
        on_spark = store_figures.figures(session, "subscriptions", at=now, receipt=CLI)
        api = server.json("GET", f"/v1/stats/subscriptions?at={now}")[1]
        expected = sorted((entry["product_id"], name, entry[name]) for entry in api["by_product"]
                          for name in store_figures.STATUS_NAMES.values() if entry[name])
        assert sorted((row["product_id"], row["status_name"], row["count"]) for row in on_spark) == expected
        assert len({row["status_name"] for row in on_spark}) == 5 and sum(row["count"] for row in on_spark) == len(states)
        # MRR's groups: per currency, the active subscriptions and their prices, as the API counts them.
        groups = store_figures.figures(session, "mrr", at=now, receipt=CLI)
        mrr = server.json("GET", f"/v1/stats/mrr?at={now}")[1]
        for line in mrr["currencies"]:
            mine = [group for group in groups if group["currency"] == line["currency"]]
            assert sum(group["subscriptions"] for group in mine) == line["subscriptions"], line
        assert {group["currency"] for group in groups} == {line["currency"] for line in mrr["currencies"]}
        # One product, the same way.
        yearly = store_figures.figures(session, "subscriptions", at=now, product="com.example.minted.yearly", receipt=CLI)
        assert [(row["product_id"], row["status_name"], row["count"]) for row in yearly] == [
            ("com.example.minted.yearly", "active", 1)]
    finally:
        server.stop()
