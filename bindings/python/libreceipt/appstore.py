"""The App Store's verifyReceipt protocol. The body, the reading of answers and the
next step come from libreceipt; this module only sends the HTTP requests (libreceipt._http).
"""
import ctypes
import json
import time

from . import _http, _native
from ._errors import ReceiptError, _check, _take_string
from ._native import lib


class AppStoreRejected(Exception):
    """The App Store answered, and the answer is no (status, response dict)."""

    def __init__(self, status, response):
        self.status = status
        self.response = response
        super().__init__(f"the App Store answered status {status}")


class AppStoreUnavailable(Exception):
    """No usable answer: network error, timeout, HTTP 5xx or retryable statuses past the retries,
    or a body that is not verifyReceipt JSON."""


def endpoint(environment):
    """Apple's verifyReceipt URL for "production" or "sandbox"."""
    return lib.receipt_appstore_endpoint(_native.ENVIRONMENTS[environment]).decode()


def request_body(receipt, password=None, exclude_old_transactions=False):
    """The JSON request body for a receipt given as bytes (raw or base64) or base64 text."""
    data = _native.input_bytes(receipt)
    error = _native.ErrorStruct()
    secret = password.encode("utf-8") if password is not None else None
    return _take_string(lambda out, length: lib.receipt_appstore_request(
        data, len(data), secret, 1 if exclude_old_transactions else 0, out, length, ctypes.byref(error)), error)


def next_step(body):
    """What to do with a response body: (status, one of "accept", "retry_in_sandbox",
    "retry_in_production", "retry_later", "reject")."""
    raw = body if isinstance(body, bytes) else body.encode("utf-8")
    answer, error = _native.AnswerStruct(), _native.ErrorStruct()
    _check(lib.receipt_appstore_parse_response(raw, len(raw), ctypes.byref(answer), ctypes.byref(error)), error)
    return answer.status, _native.NEXT_STEPS[answer.next_step]


def local_response(receipt, verifier, expect="production", pretty=False):
    """The response verifyReceipt would give, produced locally, as a dict."""
    data = _native.input_bytes(receipt)
    text = _take_string(lambda out, length: lib.receipt_appstore_local_response(
        data, len(data), verifier._handle, _native.ENVIRONMENTS[expect], _native.JSON_PRETTY if pretty else 0,
        out, length))
    return json.loads(text)


def verify_receipt(receipt, password=None, sandbox=False, production_url=None, sandbox_url=None, timeout=10.0,
                   retries=2, exclude_old_transactions=False):
    """Asks verifyReceipt and returns the response dict when accepted (0 or 21006).
    The redirects (21007/21008) and retries (21005, 21009, 21100-21199, is-retryable,
    HTTP 5xx, never 21003/21004) are libreceipt's; this function only does the HTTP."""
    data = _native.input_bytes(receipt)
    exchange, error = ctypes.c_void_p(), _native.ErrorStruct()

    def text(value):
        return value.encode("utf-8") if value is not None else None

    _check(lib.receipt_appstore_exchange_new(
        data, len(data), text(password), 1 if exclude_old_transactions else 0,
        _native.ENVIRONMENTS["sandbox" if sandbox else "production"], text(production_url), text(sandbox_url),
        retries, ctypes.byref(exchange), ctypes.byref(error)), error)
    try:
        body = lib.receipt_appstore_exchange_body(exchange)
        while True:
            url = lib.receipt_appstore_exchange_url(exchange).decode()
            try:
                status_code, answer = _post(url, body, timeout)
            except AppStoreUnavailable as failure:  # status 0 tells the exchange the transport failed
                status_code, answer = 0, str(failure).encode("utf-8")
            step = _native.ExchangeStepStruct()
            _check(lib.receipt_appstore_exchange_handle(exchange, status_code, answer, len(answer), ctypes.byref(step)))
            action = _native.EXCHANGE_ACTIONS[step.action]
            if action == "send":
                time.sleep(step.delay_ms / 1000)
            elif action == "accepted":
                return json.loads(answer)
            elif action == "rejected":
                raise AppStoreRejected(step.status, json.loads(answer))
            else:
                raise AppStoreUnavailable(step.detail.decode("utf-8", "replace"))
    finally:
        lib.receipt_appstore_exchange_free(exchange)


def _post(url, body, timeout):
    """(HTTP status, body bytes); transport failures raise AppStoreUnavailable. The body carries
    the shared secret: no redirect is followed, http only to loopback (libreceipt._http)."""
    try:
        status, _headers, answer = _http.exchange("POST", url, {"Content-Type": "application/json"}, body, timeout,
                                                  16 << 20)
        return status, answer
    except (OSError, ValueError) as error:
        raise AppStoreUnavailable(f"{url}: {error}") from None
