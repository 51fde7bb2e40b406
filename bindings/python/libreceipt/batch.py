"""Many receipts (and StoreKit 2 JWS) in one call: a thin wrapper over receipt_batch_*, for data
pipelines. A JWS fills the same columns (receipt.h says which member fills which)."""
import ctypes

from . import _native
from ._errors import _check
from ._native import lib

ABSENT = -(1 << 63)  # RECEIPT_BATCH_ABSENT

RECEIPT_FIELDS = ("valid", "status", "bundle_id", "application_version", "original_application_version",
                  "receipt_type", "receipt_creation_date_ms", "in_app_count", "fingerprint")
PURCHASE_FIELDS = ("product_id", "transaction_id", "original_transaction_id", "purchase_date_ms",
                   "original_purchase_date_ms", "expires_date_ms", "cancellation_date_ms", "quantity",
                   "web_order_line_item_id", "is_trial_period", "is_in_intro_offer_period")

_status_names = {}


def _status_name(status):
    name = _status_names.get(status)
    if name is None:
        name = _status_names[status] = lib.receipt_status_name(status).decode()
    return name


def _text(pointer):
    return None if pointer is None else pointer.decode("utf-8")


def _number(value):
    return None if value == ABSENT else value


def _flag(value):
    return None if value < 0 else bool(value)


def verify_many(verifier, inputs, with_purchases=False):
    """Verifies every input (bytes: DER/BER, base64 or a JWS; str: base64 or a JWS; None: absent) in one call.
    Returns (receipts, purchases): one dict per input with RECEIPT_FIELDS, and, when asked, one
    (row index, dict of PURCHASE_FIELDS) per purchase. Unreadable inputs are rows with a status."""
    values = [None if value is None else _native.input_bytes(value) for value in inputs]
    pointers = [None if value is None else ctypes.cast(ctypes.c_char_p(value), ctypes.c_void_p).value for value in values]
    return verify_buffers(verifier, pointers, [0 if value is None else len(value) for value in values], with_purchases,
                          keep=values)


def verify_buffers(verifier, addresses, lengths, with_purchases=False, keep=None):
    """verify_many over memory the caller holds (an Arrow column's buffers, say): `addresses[i]`
    an int address or None for an absent input, `lengths[i]` its size. `keep` is held during
    the call, so that whatever owns the memory stays alive."""
    count = len(addresses)
    array = (ctypes.c_void_p * count)(*addresses)
    lengths = (ctypes.c_size_t * count)(*lengths)
    rows = (_native.BatchRowStruct * count)()
    batch = ctypes.c_void_p()
    _check(lib.receipt_batch_verify(verifier._handle, array, lengths, count, ctypes.byref(batch), rows))
    try:
        # Every row's fingerprint in one call, as hex; an unreadable row has none.
        digests = (ctypes.c_uint8 * (count * _native.FINGERPRINT_SIZE))()
        _check(lib.receipt_batch_fingerprints(batch, digests, count))
        hexadecimal = bytes(digests).hex()
        width = 2 * _native.FINGERPRINT_SIZE
        unreadable = "0" * width  # what the library writes for a row it could not read
        fingerprints = [hexadecimal[index * width:(index + 1) * width] for index in range(count)]
        fingerprints = [None if fingerprint == unreadable else fingerprint for fingerprint in fingerprints]
        receipts = [{
            "valid": bool(row.valid), "status": _status_name(row.status), "bundle_id": _text(row.bundle_id),
            "application_version": _text(row.application_version),
            "original_application_version": _text(row.original_application_version),
            "receipt_type": _text(row.receipt_type), "receipt_creation_date_ms": _number(row.receipt_creation_date_ms),
            "in_app_count": row.in_app_count,
            "fingerprint": fingerprints[index],
        } for index, row in enumerate(rows)]
        purchases = []
        if with_purchases:
            total = lib.receipt_batch_purchase_count(batch)
            entries = (_native.BatchPurchaseStruct * total)()
            _check(lib.receipt_batch_purchases(batch, entries, total))
            purchases = [(entry.row, {
                "product_id": _text(entry.product_id), "transaction_id": _text(entry.transaction_id),
                "original_transaction_id": _text(entry.original_transaction_id),
                "purchase_date_ms": _number(entry.purchase_date_ms),
                "original_purchase_date_ms": _number(entry.original_purchase_date_ms),
                "expires_date_ms": _number(entry.expires_date_ms),
                "cancellation_date_ms": _number(entry.cancellation_date_ms), "quantity": _number(entry.quantity),
                "web_order_line_item_id": _number(entry.web_order_line_item_id),
                "is_trial_period": _flag(entry.is_trial_period),
                "is_in_intro_offer_period": _flag(entry.is_in_intro_offer_period),
            }) for entry in entries]
        return receipts, purchases
    finally:
        lib.receipt_batch_free(batch)
        del keep
