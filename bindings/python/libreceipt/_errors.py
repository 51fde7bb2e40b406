"""Statuses as exceptions, and owned strings as Python strings."""
import ctypes

from . import _native
from ._native import lib


class ReceiptError(Exception):
    """A libreceipt failure: `status` (int), `name` (e.g. "RECEIPT_E_TRUNCATED"),
    `detail` (where and why), and `offset` (a byte offset into the decoded input, or None)."""

    def __init__(self, status, detail="", offset=None):
        self.status = status
        self.name = lib.receipt_status_name(status).decode()
        self.message = lib.receipt_status_string(status).decode()
        self.detail = detail or self.message
        self.offset = offset
        super().__init__(f"{self.name}: {self.detail}")


def _check(status):
    if status != _native.STATUS_OK:
        raise ReceiptError(status)


def _take_json(function, handle, pretty):
    """Calls a receipt_*_to_json function and frees the string it returns."""
    out, length = ctypes.c_void_p(), ctypes.c_size_t()
    _check(function(handle, _native.JSON_PRETTY if pretty else 0, ctypes.byref(out), ctypes.byref(length)))
    try:
        return ctypes.string_at(out, length.value).decode("utf-8")
    finally:
        lib.receipt_string_free(out)
