"""Statuses as exceptions, and owned strings as Python strings."""
import ctypes

from . import _native
from ._native import ArgumentTypeError, lib  # noqa: F401 (ArgumentTypeError: exported from here)


class ReceiptError(ValueError):
    """A libreceipt failure: `status` (int), `name` (e.g. "RECEIPT_E_TRUNCATED"),
    `detail` (where and why), and `offset` (a byte offset into the decoded input, or None).
    A ValueError, as Apple's library raises for bad input, so code written against it
    that catches ValueError catches this too."""

    def __init__(self, status, detail="", offset=None):
        self.status = status
        self.name = lib.receipt_status_name(status).decode()
        self.message = lib.receipt_status_string(status).decode()
        self.detail = detail or self.message
        self.offset = offset
        super().__init__(f"{self.name}: {self.detail}")


def _check(status, error=None):
    """Raises for a failed status, with the call's receipt_error_t detail, or else the
    thread's last error (receipt_last_error), when it is this failure's."""
    if status != _native.STATUS_OK:
        if error is None or error.status != status:
            error = _native.ErrorStruct()
            lib.receipt_last_error(ctypes.byref(error))
        if error.status == status:
            offset = None if error.offset == _native.NO_OFFSET else error.offset
            raise ReceiptError(status, error.detail.decode("utf-8", "replace"), offset)
        raise ReceiptError(status)


def _take_json(function, handle, pretty):
    """Calls a receipt_*_to_json function and frees the string it returns."""
    return _take_string(lambda out, length: function(handle, _native.JSON_PRETTY if pretty else 0, out, length))


def _take_string(call, error=None):
    """Runs call(out, length) for a function returning an owned string; frees it."""
    out, length = ctypes.c_void_p(), ctypes.c_size_t()
    _check(call(ctypes.byref(out), ctypes.byref(length)), error)
    try:
        return ctypes.string_at(out, length.value).decode("utf-8")
    finally:
        lib.receipt_string_free(out)
