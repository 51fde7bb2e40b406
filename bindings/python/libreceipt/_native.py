"""ctypes declarations of Include/receipt.h, and nothing else."""
import ctypes
import ctypes.util
import os


class ArgumentTypeError(TypeError, ValueError):
    """An argument of the wrong type: a TypeError, and a ValueError for callers of
    Apple's library, which catch ValueError for every bad argument."""


c_char_p_p = ctypes.POINTER(ctypes.c_char_p)
c_ubyte_p = ctypes.POINTER(ctypes.c_ubyte)

DETAIL_SIZE = 256
NO_OFFSET = ctypes.c_size_t(-1).value

STATUS_OK = 0
STATUS_ABSENT = 3

KIND_STRING, KIND_INTEGER, KIND_BOOLEAN, KIND_DATE, KIND_BYTES, KIND_PURCHASES = range(1, 7)
FIRST_IN_APP_FIELD = 1701  # receipt.h: app fields are below 1701, in-app fields 1701 and up
JSON_PRETTY = 1


class ErrorStruct(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("offset", ctypes.c_size_t), ("detail", ctypes.c_char * DETAIL_SIZE)]


class AttributeStruct(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int64), ("version", ctypes.c_int64),
                ("value", c_ubyte_p), ("value_length", ctypes.c_size_t)]


PACKAGED_LIBRARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libreceipt.so.1")


def _load():
    """libreceipt.so.1 from, in order: $RECEIPT_LIBRARY; this package's own copy (a wheel
    from `make wheel` carries one); the system's library search path."""
    explicit = os.environ.get("RECEIPT_LIBRARY")
    if explicit:
        candidates = [("RECEIPT_LIBRARY", explicit)]
    else:
        candidates = [("the package", PACKAGED_LIBRARY)] if os.path.exists(PACKAGED_LIBRARY) else []
        candidates.append(("the library search path", ctypes.util.find_library("receipt") or "libreceipt.so.1"))
    failures = []
    for where, path in candidates:
        try:
            return ctypes.CDLL(path)
        except OSError as error:
            failures.append(f"{where} ({path}): {error}")
    raise ImportError("libreceipt: cannot load libreceipt.so.1. Tried " + "; ".join(failures) + ". Install a wheel "
                      "built by `make wheel` (it carries the library), or `make install` the library and run "
                      "ldconfig (or set LD_LIBRARY_PATH), or set RECEIPT_LIBRARY to the path of libreceipt.so.1.")


lib = _load()

_signatures = {
    "receipt_version": (ctypes.c_uint, []),
    "receipt_version_string": (ctypes.c_char_p, []),
    "receipt_status_name": (ctypes.c_char_p, [ctypes.c_int]),
    "receipt_status_string": (ctypes.c_char_p, [ctypes.c_int]),
    "receipt_last_error": (ctypes.c_int, [ctypes.c_void_p]),
    "receipt_parse": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p),
                                     ctypes.POINTER(ErrorStruct)]),
    "receipt_free": (None, [ctypes.c_void_p]),
    "receipt_webhook_verify": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                              ctypes.c_size_t, ctypes.c_char_p, ctypes.c_int64, ctypes.c_int64,
                                              ctypes.POINTER(ErrorStruct)]),
    "receipt_field_count": (ctypes.c_size_t, []),
    "receipt_field_at": (ctypes.c_int, [ctypes.c_size_t, ctypes.POINTER(ctypes.c_int)]),
    "receipt_field_name": (ctypes.c_char_p, [ctypes.c_int]),
    "receipt_field_kind": (ctypes.c_int, [ctypes.c_int]),
    "receipt_get_string": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, c_char_p_p,
                                          ctypes.POINTER(ctypes.c_size_t)]),
    "receipt_get_int": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int64)]),
    "receipt_get_date": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int64)]),
    "receipt_get_bytes": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(c_ubyte_p),
                                         ctypes.POINTER(ctypes.c_size_t)]),
    "receipt_purchase_count": (ctypes.c_size_t, [ctypes.c_void_p]),
    "receipt_purchase_get_string": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, c_char_p_p,
                                                   ctypes.POINTER(ctypes.c_size_t)]),
    "receipt_purchase_get_int": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                                ctypes.POINTER(ctypes.c_int64)]),
    "receipt_purchase_get_date": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                                 ctypes.POINTER(ctypes.c_int64)]),
    "receipt_purchase_get_bytes": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                                  ctypes.POINTER(c_ubyte_p), ctypes.POINTER(ctypes.c_size_t)]),
    "receipt_attribute_count": (ctypes.c_size_t, [ctypes.c_void_p]),
    "receipt_attribute_at": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(AttributeStruct)]),
    "receipt_purchase_attribute_count": (ctypes.c_size_t, [ctypes.c_void_p, ctypes.c_size_t]),
    "receipt_purchase_attribute_at": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t,
                                                     ctypes.POINTER(AttributeStruct)]),
    "receipt_to_json": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_uint, ctypes.POINTER(ctypes.c_void_p),
                                       ctypes.POINTER(ctypes.c_size_t)]),
    "receipt_string_free": (None, [ctypes.c_void_p]),
}

class StepStruct(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("outcome", ctypes.c_int), ("status", ctypes.c_int),
                ("detail", ctypes.c_char_p)]


TRUST_APPLE_ROOT = 1
TRUST_XCODE_STOREKIT = 2
STEP_OUTCOMES = ("passed", "skipped", "failed")

class AnswerStruct(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int64), ("next_step", ctypes.c_int), ("is_retryable", ctypes.c_int),
                ("environment", ctypes.c_int)]


class ExchangeStepStruct(ctypes.Structure):
    _fields_ = [("action", ctypes.c_int), ("status", ctypes.c_int64), ("delay_ms", ctypes.c_int),
                ("detail", ctypes.c_char * DETAIL_SIZE)]


class BatchRowStruct(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("valid", ctypes.c_int), ("bundle_id", ctypes.c_char_p),
                ("application_version", ctypes.c_char_p), ("original_application_version", ctypes.c_char_p),
                ("receipt_type", ctypes.c_char_p), ("receipt_creation_date_ms", ctypes.c_int64),
                ("in_app_count", ctypes.c_size_t)]


class BatchPurchaseStruct(ctypes.Structure):
    _fields_ = [("row", ctypes.c_size_t), ("product_id", ctypes.c_char_p), ("transaction_id", ctypes.c_char_p),
                ("original_transaction_id", ctypes.c_char_p), ("purchase_date_ms", ctypes.c_int64),
                ("original_purchase_date_ms", ctypes.c_int64), ("expires_date_ms", ctypes.c_int64),
                ("cancellation_date_ms", ctypes.c_int64), ("quantity", ctypes.c_int64),
                ("web_order_line_item_id", ctypes.c_int64), ("is_trial_period", ctypes.c_int),
                ("is_in_intro_offer_period", ctypes.c_int)]


EXCHANGE_ACTIONS = ("send", "accepted", "rejected", "unavailable")
ENTITLEMENTS_UNVERIFIED = 2
ENVIRONMENTS = {"production": 0, "sandbox": 1, "xcode": 2, "local-testing": 3}
JWS_TYPES = ("unknown", "transaction", "renewal_info", "notification", "app_transaction", "realtime_request")
NEXT_STEPS = ("accept", "retry_in_sandbox", "retry_in_production", "retry_later", "reject")

_handle_out = ctypes.POINTER(ctypes.c_void_p)
_owned_out = (ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t))
_signatures.update({
    "receipt_verifier_builder_new": (ctypes.c_int, [_handle_out]),
    "receipt_verifier_builder_free": (None, [ctypes.c_void_p]),
    "receipt_verifier_builder_set_trust": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_uint]),
    "receipt_verifier_builder_add_anchor": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                                           ctypes.POINTER(ErrorStruct)]),
    "receipt_verifier_builder_set_bundle_id": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]),
    "receipt_verifier_builder_set_application_version": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]),
    "receipt_verifier_builder_set_device_id": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]),
    "receipt_verifier_builder_set_now": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int64]),
    "receipt_verifier_builder_clear_now": (ctypes.c_int, [ctypes.c_void_p]),
    "receipt_verifier_builder_set_environment": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]),
    "receipt_verifier_builder_clear_environment": (ctypes.c_int, [ctypes.c_void_p]),
    "receipt_verifier_builder_set_app_apple_id": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int64]),
    "receipt_verifier_builder_clear_app_apple_id": (ctypes.c_int, [ctypes.c_void_p]),
    "receipt_verifier_build": (ctypes.c_int, [ctypes.c_void_p, _handle_out]),
    "receipt_verifier_free": (None, [ctypes.c_void_p]),
    "receipt_verify": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, _handle_out]),
    "receipt_verify_bytes": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, _handle_out,
                                            ctypes.POINTER(ErrorStruct)]),
    "receipt_verify_jws": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, _handle_out, _handle_out,
                                          ctypes.POINTER(ErrorStruct)]),
    "receipt_verify_jws_as": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int, _handle_out,
                                             _handle_out, ctypes.POINTER(ErrorStruct)]),
    "receipt_jws_decode_unverified": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_size_t, _handle_out,
                                                     ctypes.POINTER(ErrorStruct)]),
    "receipt_jws_free": (None, [ctypes.c_void_p]),
    "receipt_jws_type": (ctypes.c_int, [ctypes.c_void_p]),
    "receipt_jws_payload": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                                           ctypes.POINTER(ctypes.c_size_t)]),
    "receipt_jws_header": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                                          ctypes.POINTER(ctypes.c_size_t)]),
    "receipt_jws_get_string": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, c_char_p_p,
                                              ctypes.POINTER(ctypes.c_size_t)]),
    "receipt_jws_get_int": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int64)]),
    "receipt_jws_get_date": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int64)]),
    "receipt_jws_get_bool": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]),
    "receipt_jws_signed_date": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64)]),
    "receipt_jws_to_json": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_uint, ctypes.POINTER(ctypes.c_void_p),
                                           ctypes.POINTER(ctypes.c_size_t)]),
    "receipt_verification_status": (ctypes.c_int, [ctypes.c_void_p]),
    "receipt_verification_step_count": (ctypes.c_size_t, [ctypes.c_void_p]),
    "receipt_verification_step_at": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(StepStruct)]),
    "receipt_verification_to_json": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_uint, ctypes.POINTER(ctypes.c_void_p),
                                                    ctypes.POINTER(ctypes.c_size_t)]),
    "receipt_verification_free": (None, [ctypes.c_void_p]),
    "receipt_fingerprint": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p]),
    "receipt_jws_fingerprint": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p]),
    "receipt_verification_fingerprint": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p]),
    "receipt_batch_fingerprint": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]),
    "receipt_batch_fingerprints": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]),
    "receipt_entitlements_json": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_char_p,
                                                 ctypes.c_uint, *_owned_out]),
    "receipt_entitlements_signed_json": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p),
                                                        ctypes.POINTER(ctypes.c_size_t), ctypes.c_size_t, ctypes.c_void_p,
                                                        ctypes.c_int64, ctypes.c_char_p, ctypes.c_uint, *_owned_out,
                                                        ctypes.POINTER(ErrorStruct)]),
    "receipt_subscription_state_json": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p),
                                                       ctypes.POINTER(ctypes.c_size_t), ctypes.c_size_t, ctypes.c_void_p,
                                                       ctypes.c_int64, ctypes.c_uint, *_owned_out, ctypes.POINTER(ErrorStruct)]),
    "receipt_batch_verify": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                                            ctypes.POINTER(ctypes.c_size_t), ctypes.c_size_t, _handle_out,
                                            ctypes.POINTER(BatchRowStruct)]),
    "receipt_batch_purchase_count": (ctypes.c_size_t, [ctypes.c_void_p]),
    "receipt_batch_purchases": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(BatchPurchaseStruct), ctypes.c_size_t]),
    "receipt_batch_free": (None, [ctypes.c_void_p]),
    "receipt_appstore_endpoint": (ctypes.c_char_p, [ctypes.c_int]),
    "receipt_appstore_request": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_int,
                                                *_owned_out, ctypes.POINTER(ErrorStruct)]),
    "receipt_appstore_parse_response": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(AnswerStruct),
                                                       ctypes.POINTER(ErrorStruct)]),
    "receipt_appstore_exchange_new": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_int,
                                                     ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int,
                                                     _handle_out, ctypes.POINTER(ErrorStruct)]),
    "receipt_appstore_exchange_url": (ctypes.c_char_p, [ctypes.c_void_p]),
    "receipt_appstore_exchange_body": (ctypes.c_char_p, [ctypes.c_void_p]),
    "receipt_appstore_exchange_handle": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t,
                                                        ctypes.POINTER(ExchangeStepStruct)]),
    "receipt_appstore_exchange_free": (None, [ctypes.c_void_p]),
    "receipt_appstore_local_response": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_int,
                                                       ctypes.c_uint, *_owned_out]),
})

for _name, (_restype, _argtypes) in _signatures.items():
    _function = getattr(lib, _name)
    _function.restype = _restype
    _function.argtypes = _argtypes


def input_bytes(data):
    """Receipt input as bytes: raw DER/BER (bytes, bytearray, memoryview), or base64 given as
    str or bytes. Anything else is a TypeError: bytes(42) would be 42 zero bytes."""
    if isinstance(data, str):
        if data and not data.lstrip().startswith(("MI", "MII")) and ("/" in data[:1] or data.endswith(
                (".der", ".b64", ".receipt", ".txt"))):
            raise ArgumentTypeError(f"a str is read as base64 receipt text, and {data[:60]!r} looks like a path: "
                            f"use Receipt.from_file(path) to read a file")
        return data.encode("ascii", "replace")
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise ArgumentTypeError(f"expected the receipt as bytes (raw DER/BER or base64) or str (base64), "
                    f"got {type(data).__name__}")


def jws_bytes(token):
    """A compact JWS as bytes: str (ASCII) or bytes. Anything else is a TypeError."""
    if isinstance(token, str):
        return token.encode("utf-8")
    if isinstance(token, (bytes, bytearray, memoryview)):
        return bytes(token)
    raise ArgumentTypeError(f"expected a compact JWS as str or bytes, got {type(token).__name__}")


def text_argument(value, name):
    """A str argument as UTF-8 for the C API; None stays None."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ArgumentTypeError(f"{name}: expected str, got {type(value).__name__}")
    return value.encode("utf-8")


def epoch_milliseconds(value, name):
    """An instant as epoch milliseconds: an int, or a timezone-aware datetime. A naive
    datetime is refused: read as host-local time it would move the instant by the
    host's offset, and a verdict must not depend on where it runs."""
    import datetime
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"{name}: a naive datetime has no time zone; pass an aware one, "
                             f"e.g. datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)")
        return int(value.timestamp() * 1000)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentTypeError(f"{name}: expected a timezone-aware datetime or epoch milliseconds (int), "
                        f"got {type(value).__name__}")
    return value


FINGERPRINT_SIZE = 32


def fingerprint(function, *handles):
    """A fingerprint (receipt.h, "fingerprints") as 64 lowercase hex digits, or None when the
    C call answers RECEIPT_E_ABSENT (a batch row that could not be read)."""
    from ._errors import _check
    out = (ctypes.c_uint8 * FINGERPRINT_SIZE)()
    status = function(*handles, out)
    if status == STATUS_ABSENT:
        return None
    _check(status)
    return bytes(out).hex()


# The App Store Server API tier (RECEIPT_SERVER_API).
class APIStepStruct(ctypes.Structure):
    _fields_ = [("action", ctypes.c_int), ("delay_ms", ctypes.c_int64), ("has_more", ctypes.c_int),
                ("http_status", ctypes.c_int), ("api_error", ctypes.c_int64), ("retry_after_ms", ctypes.c_int64),
                ("detail", ctypes.c_char * DETAIL_SIZE)]


API_ACTIONS = ("send", "answered", "failed")
_error_out = ctypes.POINTER(ErrorStruct)
_api_signatures = {
    "receipt_api_credentials_new": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_char_p,
                                                   ctypes.c_char_p, _handle_out, _error_out]),
    "receipt_api_credentials_new_with_form": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                                             ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, _handle_out,
                                                             _error_out]),
    "receipt_api_credentials_free": (None, [ctypes.c_void_p]),
    "receipt_api_client_new": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p,
                                              _handle_out, _error_out]),
    "receipt_api_client_free": (None, [ctypes.c_void_p]),
    "receipt_api_call_count": (ctypes.c_size_t, []),
    "receipt_api_call_name": (ctypes.c_char_p, [ctypes.c_size_t]),
    "receipt_api_error_name": (ctypes.c_char_p, [ctypes.c_int64]),
    "receipt_api_apple_verification_status": (ctypes.c_char_p, [ctypes.c_int]),
    "receipt_api_apple_refusal": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                                                 ctypes.POINTER(ctypes.c_size_t)]),
    "receipt_api_error_count": (ctypes.c_size_t, []),
    "receipt_api_error_code": (ctypes.c_int64, [ctypes.c_size_t]),
    "receipt_api_exchange_new": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t,
                                                ctypes.c_int, _handle_out, _error_out]),
    "receipt_api_exchange_method": (ctypes.c_char_p, [ctypes.c_void_p]),
    "receipt_api_exchange_url": (ctypes.c_char_p, [ctypes.c_void_p]),
    "receipt_api_exchange_header_count": (ctypes.c_size_t, [ctypes.c_void_p]),
    "receipt_api_exchange_header_name": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_size_t]),
    "receipt_api_exchange_header_value": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_size_t]),
    "receipt_api_exchange_body": (ctypes.c_void_p, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]),
    "receipt_api_exchange_handle": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p,
                                                   ctypes.c_size_t, ctypes.POINTER(APIStepStruct), _error_out]),
    "receipt_api_exchange_answer": (ctypes.c_void_p, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]),
    "receipt_api_exchange_error_message": (ctypes.c_char_p, [ctypes.c_void_p]),
    "receipt_api_exchange_next_page": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int), _error_out]),
    "receipt_api_exchange_free": (None, [ctypes.c_void_p]),
    "receipt_api_exchange_fall_back_to_sandbox": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, _error_out]),
    "receipt_api_promotional_offer_signature": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p,
                                                               ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int64,
                                                               *_owned_out, _error_out]),
    "receipt_api_promotional_offer_v2": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p,
                                                        ctypes.c_char_p, *_owned_out, _error_out]),
    "receipt_api_introductory_offer_eligibility": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int,
                                                                  ctypes.c_char_p, *_owned_out, _error_out]),
    "receipt_api_advanced_commerce_request": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
                                                             *_owned_out, _error_out]),
}
for _name, (_restype, _argtypes) in _api_signatures.items():
    _function = getattr(lib, _name)
    _function.restype = _restype
    _function.argtypes = _argtypes


# Revocation (OCSP): the verifier's mode and the loop of receipt.h.
REVOCATION_MODES = {"off": 0, "soft": 1, "hard": 2}
_revocation_signatures = {
    "receipt_verifier_builder_set_revocation": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int]),
    "receipt_revocation_queries": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t, _handle_out,
                                                  _error_out]),
    "receipt_revocation_query_count": (ctypes.c_size_t, [ctypes.c_void_p]),
    "receipt_revocation_query_url": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_size_t]),
    "receipt_revocation_query_body": (ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_size_t,
                                                        ctypes.POINTER(ctypes.c_size_t)]),
    "receipt_revocation_answer": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                                 ctypes.c_char_p, ctypes.c_size_t, _error_out]),
    "receipt_revocation_queries_free": (None, [ctypes.c_void_p]),
}
for _name, (_restype, _argtypes) in _revocation_signatures.items():
    _function = getattr(lib, _name)
    _function.restype = _restype
    _function.argtypes = _argtypes
