"""Checks webhook messages that `receipt serve --webhook` delivers, signed as the Standard
Webhooks specification says (libreceipt's receipt_webhook_verify does the check)."""
import ctypes

from . import _native
from ._errors import _check
from ._native import lib

#: The specification's tolerance between the message's timestamp and the receiver's clock.
DEFAULT_TOLERANCE_SECONDS = 300


def _header(headers, name):
    for key, value in headers.items():
        if key.lower() == name:
            return value
    raise ValueError(f"the request has no {name} header")


def verify(secret, headers, body, now=None, tolerance_seconds=DEFAULT_TOLERANCE_SECONDS):
    """Checks a delivery: `secret` is the endpoint's "whsec_…" secret; `headers` a mapping
    holding webhook-id, webhook-timestamp and webhook-signature (any case); `body` the bytes
    received. Returns the webhook-id (the key to de-duplicate on). Raises ReceiptError
    (RECEIPT_E_SIGNATURE_INVALID: no signature matches, or the timestamp is more than
    `tolerance_seconds` from `now`, seconds since the epoch, default the clock)."""
    if isinstance(body, str):
        raise TypeError("body must be the bytes received, not text")
    body = bytes(body)
    message_id = _header(headers, "webhook-id")
    error = _native.ErrorStruct()
    _check(lib.receipt_webhook_verify(secret.encode(), message_id.encode(), _header(headers, "webhook-timestamp").encode(),
                                      body, len(body), _header(headers, "webhook-signature").encode(),
                                      int(now or 0), int(tolerance_seconds), ctypes.byref(error)), error)
    return message_id
