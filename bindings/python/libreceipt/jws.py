"""StoreKit 2 JWS: a thin wrapper over receipt_jws_* and receipt_verify_jws."""
import ctypes
import json

from . import _native
from ._errors import ReceiptError, _check, _take_json
from ._native import lib


class JWS:
    """A decoded JWS (verified or not: see how you got it). `type` is "transaction",
    "renewal_info", "notification", "app_transaction" or "unknown"; `payload` and
    `header` are dicts of the JSON exactly as signed (`payload_json`, `header_json`);
    `signed_date` is the signing instant in epoch ms (None when absent)."""

    def __init__(self, handle):
        self._handle = handle

    def _borrowed(self, function):
        out, length = ctypes.c_void_p(), ctypes.c_size_t()
        _check(function(self._handle, ctypes.byref(out), ctypes.byref(length)))
        return ctypes.string_at(out, length.value).decode("utf-8")

    @property
    def type(self):
        return _native.JWS_TYPES[lib.receipt_jws_type(self._handle)]

    @property
    def payload_json(self):
        """The payload's JSON text, exactly as signed."""
        return self._borrowed(lib.receipt_jws_payload)

    @property
    def header_json(self):
        return self._borrowed(lib.receipt_jws_header)

    @property
    def payload(self):
        """The payload as a dict, parsed from the exact signed JSON."""
        return json.loads(self.payload_json)

    @property
    def header(self):
        return json.loads(self.header_json)

    @property
    def fingerprint(self):
        """SHA-256 of the ASCII header.payload, hex: the same for every spelling of this JWS's
        signature, so the key to de-duplicate and block replays on (receipt.h, "fingerprints")."""
        return _native.fingerprint(lib.receipt_jws_fingerprint, self._handle)

    @property
    def signed_date(self):
        value = ctypes.c_int64()
        status = lib.receipt_jws_signed_date(self._handle, ctypes.byref(value))
        if status == _native.STATUS_ABSENT:
            return None
        _check(status)
        return value.value

    def to_json(self, pretty=False):
        """{"format": "jws", "type", "header", "payload", "signed_date_ms", "certificates"}."""
        return _take_json(lib.receipt_jws_to_json, self._handle, pretty)

    def __del__(self):
        if getattr(self, "_handle", None):
            lib.receipt_jws_free(self._handle)
            self._handle = None

    def __repr__(self):
        return f"<JWS {self.type}>"


def decode_jws_unverified(token):
    """Decodes a compact JWS (str or bytes) WITHOUT verifying it: nothing in it is to be
    believed. Raises ReceiptError when it is not a readable JWS."""
    data = _native.jws_bytes(token)
    out, error = ctypes.c_void_p(), _native.ErrorStruct()
    _check(lib.receipt_jws_decode_unverified(data, len(data), ctypes.byref(out), ctypes.byref(error)), error)
    return JWS(out)


def verify_jws(verifier_handle, token, kind=None):
    """(JWS, verification handle) for Verifier.verify_jws; raises when unreadable (the
    detail comes from receipt_last_error, which spares a receipt_error_t per call).
    `kind`: one of JWS_TYPES that the payload must be (taken from the call, as Apple's
    verifiers do), or None to tell it from the members."""
    data = _native.jws_bytes(token)
    jws, result = ctypes.c_void_p(), ctypes.c_void_p()
    if kind is None:
        status = lib.receipt_verify_jws(verifier_handle, data, len(data), ctypes.byref(jws), ctypes.byref(result), None)
    else:
        if kind not in _native.JWS_TYPES[1:]:
            raise ValueError(f"kind: one of {', '.join(_native.JWS_TYPES[1:])}, not {kind!r}")
        status = lib.receipt_verify_jws_as(verifier_handle, data, len(data), _native.JWS_TYPES.index(kind),
                                           ctypes.byref(jws), ctypes.byref(result), None)
    if not result:
        _check(status)
        raise ReceiptError(status)
    return JWS(jws), result


def entitlements(at, transactions=(), receipt=None, verifier=None, catalog=None, unverified=False):
    """What one customer's signed transactions (compact JWS, str or bytes) and, optionally, the
    Receipt of an older app version entitle them to at `at` (an aware datetime or epoch ms), as
    a dict in the shape of Receipt.entitlements(), each purchase with its "source". A transaction
    in both, or twice, counts once. Everything is verified with `verifier` first; a failure
    raises ReceiptError with its status. unverified=True, with no verifier, is only for data
    verified some other way."""
    import json as _json
    from ._errors import _take_string
    at = _native.epoch_milliseconds(at, "at")
    array, lengths, count = _token_array(transactions)
    flags = _native.ENTITLEMENTS_UNVERIFIED if unverified else 0
    catalog_text = _json.dumps(catalog).encode() if catalog is not None else None
    receipt_handle = receipt._handle_or_raise() if receipt is not None else None
    verifier_handle = verifier._handle if verifier is not None else None
    error = _native.ErrorStruct()
    text = _take_string(lambda out, length: lib.receipt_entitlements_signed_json(
        receipt_handle, array, lengths, count, verifier_handle, int(at), catalog_text, flags, out, length,
        ctypes.byref(error)), error)
    return _json.loads(text)


def subscription_state(original_transaction_id, tokens, at, verifier=None, unverified=False):
    """What one auto-renewable subscription is at `at` (an aware datetime or epoch ms), from its
    signed transactions, renewal infos and notifications (compact JWS, str or bytes, any order),
    as a dict shaped like `receipt serve`'s GET /v1/subscriptions/{id}: Apple's "status" (1 active,
    2 expired, 3 billing retry, 4 grace period, 5 revoked), "status_name", "entitled", the deciding
    transaction and the renewal info with their payloads, and "pending_renewal_info". Every token is
    verified with `verifier` first; a failure raises ReceiptError with its status, as does no
    transaction of that id, or a purchase signed as another type than "Auto-Renewable
    Subscription" (RECEIPT_E_ABSENT). unverified=True, with no verifier, is only for tokens
    verified some other way."""
    import json as _json
    from ._errors import _take_string
    at = _native.epoch_milliseconds(at, "at")
    array, lengths, count = _token_array(tokens)
    flags = _native.ENTITLEMENTS_UNVERIFIED if unverified else 0
    verifier_handle = verifier._handle if verifier is not None else None
    error = _native.ErrorStruct()
    text = _take_string(lambda out, length: lib.receipt_subscription_state_json(
        str(original_transaction_id).encode(), array, lengths, count, verifier_handle, int(at), flags, out, length,
        ctypes.byref(error)), error)
    return _json.loads(text)


def _token_array(tokens):
    """JWS tokens (str or bytes) as the C arrays of pointers and lengths, and their count."""
    data = [_native.jws_bytes(token) for token in tokens]
    return (ctypes.c_char_p * len(data))(*data), (ctypes.c_size_t * len(data))(*[len(token) for token in data]), len(data)
