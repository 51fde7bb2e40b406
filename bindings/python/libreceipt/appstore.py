"""The App Store's verifyReceipt protocol. The body, the reading of answers and the
next step come from libreceipt; this module only sends the HTTP requests (urllib).
"""
import ctypes
import json
import time
import urllib.error
import urllib.request

from . import _native
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
    data = receipt.encode("ascii") if isinstance(receipt, str) else bytes(receipt)
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
    data = receipt.encode("ascii") if isinstance(receipt, str) else bytes(receipt)
    text = _take_string(lambda out, length: lib.receipt_appstore_local_response(
        data, len(data), verifier._handle, _native.ENVIRONMENTS[expect], _native.JSON_PRETTY if pretty else 0,
        out, length))
    return json.loads(text)


def verify_receipt(receipt, password=None, sandbox=False, production_url=None, sandbox_url=None, timeout=10.0,
                   retries=2, exclude_old_transactions=False):
    """Asks verifyReceipt, moving once to the other environment on 21007/21008 and backing
    off on retryable answers. Returns the response dict when accepted (0 or 21006)."""
    body = request_body(receipt, password, exclude_old_transactions).encode("utf-8")
    urls = {"production": production_url or endpoint("production"), "sandbox": sandbox_url or endpoint("sandbox")}
    environment = "sandbox" if sandbox else "production"
    switched, attempts = False, 0
    while True:
        status_code, text = _post(urls[environment], body, timeout)
        if status_code >= 500:
            step, status = "retry_later", None
        else:
            try:
                status, step = next_step(text)
            except ReceiptError as error:
                raise AppStoreUnavailable(f"{urls[environment]} answered HTTP {status_code}: {error.detail}") from None
        if step == "accept":
            return json.loads(text)
        if step in ("retry_in_sandbox", "retry_in_production") and not switched:
            switched, environment = True, "sandbox" if step == "retry_in_sandbox" else "production"
        elif step == "retry_later" and attempts < retries:
            attempts += 1
            time.sleep(0.2 * 2 ** attempts)
        elif step == "retry_later":
            raise AppStoreUnavailable(f"{urls[environment]} still asks to retry after {retries} retries")
        else:
            raise AppStoreRejected(status, json.loads(text))


def _post(url, body, timeout):
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8", "replace")
    except (urllib.error.URLError, TimeoutError, OSError) as error:
        raise AppStoreUnavailable(f"{url}: {error}") from None
