"""App Store receipts for Python: a thin binding to libreceipt.so.1.

Parsing, typing and JSON rendering all happen in the library. This module turns
its handles into objects, its fields into attributes, and its statuses into
exceptions.

    Receipt(data) / Receipt.from_file(path)   parse (structure only, no trust)
    Verifier(...).verify(receipt)              the verdict: a Verification with Steps
    Verifier(...).verify_bytes(data)           the verdict straight from bytes
    Receipt.entitlements(at, verifier)         what the receipt grants at an instant
    subscription_state(id, tokens, at, verifier)  a subscription's status from its JWS (as receipt serve's)
    libreceipt.appstore                        the verifyReceipt protocol (local and remote)

Failures raise ReceiptError. Type hints are in the package's .pyi stubs (py.typed).
"""
import collections.abc
import ctypes
import datetime

from . import _native
from ._errors import ArgumentTypeError, ReceiptError, _check, _take_json, _take_string
from ._native import lib

__all__ = ["Receipt", "Purchase", "Purchases", "ReceiptDate", "RawAttribute", "ReceiptError", "ArgumentTypeError", "Verifier", "Verification", "Step",
           "JWS", "decode_jws_unverified", "entitlements", "subscription_state", "appstore", "library_version", "__version__"]


__version__ = "0.1.0"  # the binding's, as pyproject.toml says; library_version() is the loaded library's


def library_version():
    """The version string of the loaded libreceipt.so."""
    return lib.receipt_version_string().decode()


class ReceiptDate:
    """A date as the receipt writes it (`text`) and the instant it denotes (`ms`, epoch milliseconds)."""
    __slots__ = ("text", "ms")

    def __init__(self, text, ms):
        self.text = text
        self.ms = ms

    @property
    def datetime(self):
        """The instant as an aware UTC datetime."""
        return datetime.datetime.fromtimestamp(self.ms / 1000, tz=datetime.timezone.utc)

    def __eq__(self, other):
        return isinstance(other, ReceiptDate) and (self.text, self.ms) == (other.text, other.ms)

    def __repr__(self):
        return f"ReceiptDate({self.text!r}, ms={self.ms})"


class RawAttribute:
    """An attribute exactly as stored: `type`, `version` and the `value` bytes."""
    __slots__ = ("type", "version", "value")

    def __init__(self, type_, version, value):
        self.type, self.version, self.value = type_, version, value

    def __repr__(self):
        return f"RawAttribute(type={self.type}, version={self.version}, value={self.value!r})"


class _Record:
    """Field access shared by a receipt and its purchases. A subclass names its C getters
    in `_getters` (receipt_get_* or receipt_purchase_get_*, by kind) and the arguments
    they take before the field in `_prefix()`."""

    def _get(self, kind, field, *outputs):
        """True when the field is present; None-worthy absence is False; any other status raises."""
        status = self._getters[kind](*self._prefix(), field, *outputs)
        if status == _native.STATUS_ABSENT:
            return False
        _check(status)
        return True

    def _text(self, field):
        pointer, length = ctypes.c_char_p(), ctypes.c_size_t()
        if not self._get("string", field, ctypes.byref(pointer), ctypes.byref(length)):
            return None
        return ctypes.string_at(pointer, length.value).decode("utf-8")

    def _integer(self, field):
        value = ctypes.c_int64()
        return value.value if self._get("int", field, ctypes.byref(value)) else None

    def _boolean(self, field):
        value = self._integer(field)
        return None if value is None else bool(value)

    def _date(self, field):
        value = ctypes.c_int64()
        return ReceiptDate(self._text(field), value.value) if self._get("date", field, ctypes.byref(value)) else None

    def _bytes(self, field):
        pointer, length = _native.c_ubyte_p(), ctypes.c_size_t()
        if not self._get("bytes", field, ctypes.byref(pointer), ctypes.byref(length)):
            return None
        return ctypes.string_at(pointer, length.value)

    def _attribute(self, count_function, at_function, *prefix):
        attributes = []
        for index in range(count_function(self._receipt._handle_or_raise(), *prefix)):
            out = _native.AttributeStruct()
            _check(at_function(self._receipt._handle_or_raise(), *prefix, index, ctypes.byref(out)))
            attributes.append(RawAttribute(out.type, out.version, ctypes.string_at(out.value, out.value_length)))
        return attributes

    def fields(self):
        """Every typed field of this record that is present, as a dict keyed by field name."""
        present = {}
        for name in self._field_names:
            value = getattr(self, name)
            if value is not None:
                present[name] = value
        return present


class Receipt(_Record):
    """A parsed app receipt. Fields are attributes named as in the App Store's JSON
    (`bundle_id`, `receipt_creation_date`, ...); absent ones are None.

    Parsing checks structure only; it does not verify any signature. Usable as a
    context manager; `close()` frees the native handle early.
    """

    def __init__(self, data):
        data = _native.input_bytes(data)
        handle = ctypes.c_void_p()
        error = _native.ErrorStruct()
        status = lib.receipt_parse(data, len(data), ctypes.byref(handle), ctypes.byref(error))
        if status != _native.STATUS_OK:
            offset = None if error.offset == _native.NO_OFFSET else error.offset
            raise ReceiptError(status, error.detail.decode("utf-8", "replace"), offset)
        self._handle = handle

    @property
    def _receipt(self):
        # A property, not an attribute: `self._receipt = self` would be a reference
        # cycle, leaving the native receipt to wait for the cycle collector.
        return self

    @classmethod
    def from_file(cls, path):
        """Parses a file holding raw DER/BER bytes or base64 text."""
        with open(path, "rb") as f:
            return cls(f.read())

    def _handle_or_raise(self):
        if not self._handle:
            raise ValueError("the receipt is closed")
        return self._handle

    @property
    def fingerprint(self):
        """SHA-256 of the signed payload, hex: the same whether the receipt came as DER, BER or
        base64, so the key to de-duplicate and block replays on (receipt.h, "fingerprints")."""
        return _native.fingerprint(lib.receipt_fingerprint, self._handle_or_raise())

    _getters = {kind: getattr(lib, f"receipt_get_{kind}") for kind in ("string", "int", "date", "bytes")}

    def _prefix(self):
        return (self._handle_or_raise(),)

    def close(self):
        """Frees the native receipt now; later field access raises ValueError."""
        if getattr(self, "_handle", None):
            lib.receipt_free(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    @property
    def purchases(self):
        """The in-app purchases (attribute 17), in receipt order, as a read-only sequence
        that makes each Purchase when it is indexed."""
        return Purchases(self, lib.receipt_purchase_count(self._handle_or_raise()))

    @property
    def raw_attributes(self):
        """Every app-level attribute as stored, known or not, in receipt order."""
        return self._attribute(lib.receipt_attribute_count, lib.receipt_attribute_at)

    def entitlements(self, at, verifier=None, catalog=None, unverified=False):
        """What this receipt entitles its owner to at `at` (an aware datetime or epoch ms), as a dict.

        The receipt is verified with `verifier` first, and a failed verification raises
        ReceiptError with its status. Pass unverified=True, and no verifier, only for a
        receipt you verified some other way. `catalog` is a dict:
        {"kinds": {product_id: kind}, "non_renewing_durations_ms": {product_id: ms}}."""
        import json as _json
        at = _native.epoch_milliseconds(at, "at")
        flags = _native.ENTITLEMENTS_UNVERIFIED if unverified else 0
        catalog_text = _json.dumps(catalog).encode() if catalog is not None else None
        verifier_handle = verifier._handle if verifier is not None else None
        text = _take_string(lambda out, length: lib.receipt_entitlements_json(
            self._handle_or_raise(), verifier_handle, int(at), catalog_text, flags, out, length))
        return _json.loads(text)

    def to_json(self, pretty=False):
        """The App Store verifyReceipt `receipt` object, as a JSON string."""
        return _take_json(lib.receipt_to_json, self._handle_or_raise(), pretty)

    def __repr__(self):
        if not self._handle:
            return "<Receipt closed>"
        return f"<Receipt {self.bundle_id!r} {len(self.purchases)} purchases>"


class Purchase(_Record):
    """One in-app purchase entry. It keeps its receipt alive."""

    def __init__(self, receipt, index):
        self._receipt = receipt
        self.index = index

    _getters = {kind: getattr(lib, f"receipt_purchase_get_{kind}") for kind in ("string", "int", "date", "bytes")}

    def _prefix(self):
        return (self._receipt._handle_or_raise(), self.index)

    def __eq__(self, other):
        return isinstance(other, Purchase) and other._receipt is self._receipt and other.index == self.index

    def __hash__(self):
        return hash((id(self._receipt), self.index))

    @property
    def raw_attributes(self):
        """Every attribute of this purchase as stored, known or not."""
        return self._attribute(lib.receipt_purchase_attribute_count, lib.receipt_purchase_attribute_at, self.index)

    def __repr__(self):
        return f"<Purchase {self.product_id!r} {self.transaction_id!r}>"


class Purchases(collections.abc.Sequence):
    """A receipt's purchases. Indexing and iterating make Purchase objects on demand, so
    reading one purchase of a large receipt costs one object, not one per purchase. It
    keeps its receipt alive and compares equal to any sequence of the same purchases."""

    def __init__(self, receipt, count):
        self._receipt = receipt
        self._count = count

    def __len__(self):
        return self._count

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [Purchase(self._receipt, i) for i in range(*index.indices(self._count))]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError("purchase index out of range")
        return Purchase(self._receipt, index)

    def __eq__(self, other):
        if not isinstance(other, collections.abc.Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(mine == theirs for mine, theirs in zip(self, other))

    def __repr__(self):
        return f"<Purchases {self._count}>"


_READERS = {_native.KIND_STRING: _Record._text, _native.KIND_INTEGER: _Record._integer,
            _native.KIND_BOOLEAN: _Record._boolean, _native.KIND_DATE: _Record._date, _native.KIND_BYTES: _Record._bytes}


def _install_field_properties():
    """One property per field of the library's own field table, on the class of its scope."""
    Receipt._field_names, Purchase._field_names = [], []
    for index in range(lib.receipt_field_count()):
        field = ctypes.c_int()
        _check(lib.receipt_field_at(index, ctypes.byref(field)))
        kind = lib.receipt_field_kind(field.value)
        if kind == _native.KIND_PURCHASES:
            continue
        name = lib.receipt_field_name(field.value).decode()
        owner = Purchase if field.value >= _native.FIRST_IN_APP_FIELD else Receipt
        owner._field_names.append(name)
        read = _READERS[kind]
        setattr(owner, name, property(lambda self, f=field.value, read=read: read(self, f),
                                      doc=f"attribute {field.value} ({name}); None when absent"))


_install_field_properties()

from .verification import Step, Verification, Verifier  # noqa: E402
from .jws import JWS, decode_jws_unverified, entitlements, subscription_state  # noqa: E402
from . import appstore  # noqa: E402
