"""Receipts at scale on Apache Spark: verify and explode the receipts of a DataFrame column.

    from libreceipt import spark as receipt_spark
    verdicts = receipt_spark.receipts(df, "receipt", bundle_id="com.example.app")
    purchases = receipt_spark.purchases(df, "receipt")

Built on DataFrame.mapInArrow: each Arrow batch is verified in one library call
(receipt_batch_verify), by one verifier per Python worker, made once. The column holds DER
bytes (binary) or base64 text (string), and may hold StoreKit 2 JWS too; a null, empty or
unreadable cell is a row with its status, never a failed job. Each receipt is verified at its
own creation date, each JWS at its signing date. A JWS row fills the same columns (receipt_type
is its environment, receipt_creation_date_ms its signing date; see receipt_batch_verify in
receipt.h); a signed transaction, alone or in a notification, explodes to one purchase.

On a cluster, ship the library with the package: a wheel from `make wheel` carries
libreceipt.so.1. Pack a virtual environment that has it installed (venv-pack, or conda-pack)
and pass it with `--archives env.tar.gz#env` and `spark.pyspark.python=./env/bin/python`; or
install the library on every executor and set `spark.executorEnv.RECEIPT_LIBRARY`.
"""
import ctypes

import pyarrow as pa

from ._native import ArgumentTypeError
from .batch import PURCHASE_FIELDS, RECEIPT_FIELDS, verify_buffers

_RECEIPT_TYPES = {"valid": "boolean", "status": "string", "bundle_id": "string", "application_version": "string",
                  "original_application_version": "string", "receipt_type": "string",
                  "receipt_creation_date_ms": "bigint", "in_app_count": "bigint", "fingerprint": "string"}
_PURCHASE_TYPES = {"product_id": "string", "transaction_id": "string", "original_transaction_id": "string",
                   "purchase_date_ms": "bigint", "original_purchase_date_ms": "bigint", "expires_date_ms": "bigint",
                   "cancellation_date_ms": "bigint", "quantity": "bigint", "web_order_line_item_id": "bigint",
                   "is_trial_period": "boolean", "is_in_intro_offer_period": "boolean"}
_ARROW = {"boolean": pa.bool_(), "string": pa.string(), "bigint": pa.int64()}

_verifiers = {}  # one per Python worker process and set of options
_EMPTY = ctypes.create_string_buffer(1)
_EMPTY_ADDRESS = ctypes.addressof(_EMPTY)


def _verifier(options):
    key = tuple(sorted((name, tuple(value) if isinstance(value, list) else value) for name, value in options.items()))
    verifier = _verifiers.get(key)
    if verifier is None:
        from .verification import Verifier
        verifier = _verifiers[key] = Verifier(**options)
    return verifier


def _options(bundle_id, environment, allow_xcode, anchors):
    return {"bundle_id": bundle_id, "environment": environment, "allow_xcode": allow_xcode,
            "anchors": [bytes(anchor) for anchor in (anchors or ())]}


def _schema(df, column, extra, keep_column=True):
    from pyspark.sql.types import BinaryType, StringType
    kind = df.schema[column].dataType
    if not isinstance(kind, (BinaryType, StringType)):
        raise ArgumentTypeError(f"{column}: expected a binary (DER) or string (base64) column, got {kind.simpleString()}")
    kept = [name for name in df.columns if keep_column or name != column]
    clash = [name for name in extra if name in kept]
    if clash:
        raise ValueError(f"the DataFrame already has columns named {clash}")
    columns = [f"`{name}` {df.schema[name].dataType.simpleString()}" for name in kept]
    return ", ".join(columns + [f"`{name}` {sql}" for name, sql in extra.items()])


def _verify(verifier, batch, column, with_purchases=False):
    """The batch's column verified in one call, read in place from its Arrow buffers: no
    Python object per cell. Binary cells are DER; string cells base64 text."""
    cells = batch.column(column)
    offsets = memoryview(cells.buffers()[1]).cast("q" if pa.types.is_large_binary(cells.type)
                                                  or pa.types.is_large_string(cells.type) else "i")
    data = cells.buffers()[2]
    # A column of empty cells may have no data buffer: their address must still not be NULL,
    # which the library reads as an absent cell.
    base = data.address if data is not None and data.address else _EMPTY_ADDRESS
    start = cells.offset
    valid = cells.is_valid().to_pylist() if cells.null_count else None
    addresses, lengths = [], []
    for index in range(len(cells)):
        low, high = offsets[start + index], offsets[start + index + 1]
        if valid is not None and not valid[index]:
            addresses.append(None)
            lengths.append(0)
        else:
            addresses.append(base + low)
            lengths.append(high - low)
    return verify_buffers(verifier, addresses, lengths, with_purchases, keep=cells)


def receipts(df, column, *, bundle_id=None, environment=None, allow_xcode=False, anchors=None):
    """`df` with its columns plus valid, status, bundle_id, application_version,
    original_application_version, receipt_type, receipt_creation_date_ms, in_app_count and
    fingerprint: the SHA-256 of the signed content as hex (null for an unreadable cell), the same
    for every spelling of one receipt or JWS, so the column to de-duplicate on."""
    options = _options(bundle_id, environment, allow_xcode, anchors)
    schema = _schema(df, column, _RECEIPT_TYPES)

    def verify(batches):
        verifier = _verifier(options)
        for batch in batches:
            rows, _ = _verify(verifier, batch, column)
            arrays = batch.columns + [pa.array([row[name] for row in rows], type=_ARROW[_RECEIPT_TYPES[name]])
                                      for name in RECEIPT_FIELDS]
            yield pa.RecordBatch.from_arrays(arrays, names=batch.schema.names + list(RECEIPT_FIELDS))

    return df.mapInArrow(verify, schema)


# Input rows verified per step of purchases(): bounds one output batch (a receipt may hold
# hundreds of purchases) whatever the size of Spark's input batches.
PURCHASES_STEP_ROWS = 1024


def purchases(df, column, *, bundle_id=None, environment=None, allow_xcode=False, anchors=None):
    """One row per in-app purchase: `df`'s columns except `column` (the receipt or JWS itself,
    which each of its purchases would otherwise copy), the purchase's fields (null where the
    receipt does not carry one), `valid`, whether its receipt verified, and `fingerprint`, its
    receipt's (join to `receipts()` on it, or keep an id column of your own). Memory per output
    row does not depend on the receipt's size; other columns are copied to each purchase, so keep
    large ones out of `df`."""
    options = _options(bundle_id, environment, allow_xcode, anchors)
    extra = dict(_PURCHASE_TYPES, valid="boolean", fingerprint="string")
    schema = _schema(df, column, extra, keep_column=False)
    others = [name for name in df.columns if name != column]

    def explode(batches):
        verifier = _verifier(options)
        for whole in batches:
            for start in range(0, whole.num_rows, PURCHASES_STEP_ROWS):
                batch = whole.slice(start, PURCHASES_STEP_ROWS)
                rows, entries = _verify(verifier, batch, column, with_purchases=True)
                indices = pa.array([row for row, _ in entries], type=pa.int64())
                kept = batch.select(others).take(indices)
                arrays = kept.columns + [pa.array([entry[name] for _, entry in entries],
                                                  type=_ARROW[_PURCHASE_TYPES[name]]) for name in PURCHASE_FIELDS]
                arrays.append(pa.array([rows[row]["valid"] for row, _ in entries], type=pa.bool_()))
                arrays.append(pa.array([rows[row]["fingerprint"] for row, _ in entries], type=pa.string()))
                yield pa.RecordBatch.from_arrays(arrays, names=others + list(PURCHASE_FIELDS) + ["valid", "fingerprint"])

    return df.mapInArrow(explode, schema)
