# Type hints of the public API (the implementation installs field properties at
# import time, from the library's own field table; Tests/python checks the two agree).
import datetime
import os
from types import TracebackType
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Type, Union, overload

from . import appstore as appstore
from ._errors import ArgumentTypeError as ArgumentTypeError
from ._errors import ReceiptError as ReceiptError
from .jws import JWS as JWS, decode_jws_unverified as decode_jws_unverified, entitlements as entitlements
from .jws import subscription_state as subscription_state
from .verification import Buffer, Step as Step, Verification as Verification, Verifier as Verifier

__all__ = ["Receipt", "Purchase", "Purchases", "ReceiptDate", "RawAttribute", "ReceiptError", "ArgumentTypeError", "Verifier",
           "Verification", "Step", "JWS", "decode_jws_unverified", "entitlements", "subscription_state", "appstore", "library_version",
           "__version__"]
__version__: str

def library_version() -> str: ...

class ReceiptDate:
    text: str
    ms: int
    def __init__(self, text: str, ms: int) -> None: ...
    @property
    def datetime(self) -> datetime.datetime: ...

class RawAttribute:
    type: int
    version: int
    value: bytes
    def __init__(self, type_: int, version: int, value: bytes) -> None: ...

class Receipt:
    @property
    def fingerprint(self) -> str: ...
    receipt_type: Optional[str]
    app_item_id: Optional[int]
    bundle_id: Optional[str]
    application_version: Optional[str]
    opaque_value: Optional[bytes]
    sha1_hash: Optional[bytes]
    receipt_creation_date: Optional[ReceiptDate]
    version_external_identifier: Optional[int]
    original_purchase_date: Optional[ReceiptDate]
    original_application_version: Optional[str]
    expiration_date: Optional[ReceiptDate]
    def __init__(self, data: Union[Buffer, str]) -> None: ...
    @classmethod
    def from_file(cls, path: Union[str, "os.PathLike[str]"]) -> "Receipt": ...
    @property
    def purchases(self) -> "Purchases": ...
    @property
    def raw_attributes(self) -> List[RawAttribute]: ...
    def fields(self) -> Dict[str, Any]: ...
    def entitlements(self, at: Union[datetime.datetime, int], verifier: Optional[Verifier] = ...,
                     catalog: Optional[Mapping[str, Any]] = ..., unverified: bool = ...) -> Dict[str, Any]: ...
    def to_json(self, pretty: bool = ...) -> str: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Receipt": ...
    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> None: ...

class Purchase:
    index: int
    quantity: Optional[int]
    product_id: Optional[str]
    transaction_id: Optional[str]
    purchase_date: Optional[ReceiptDate]
    original_transaction_id: Optional[str]
    original_purchase_date: Optional[ReceiptDate]
    product_type: Optional[int]
    expires_date: Optional[ReceiptDate]
    web_order_line_item_id: Optional[int]
    cancellation_date: Optional[ReceiptDate]
    is_trial_period: Optional[bool]
    is_in_intro_offer_period: Optional[bool]
    promotional_offer_id: Optional[str]
    @property
    def raw_attributes(self) -> List[RawAttribute]: ...
    def fields(self) -> Dict[str, Any]: ...

class Purchases(Sequence[Purchase]):
    def __len__(self) -> int: ...
    @overload
    def __getitem__(self, index: int) -> Purchase: ...
    @overload
    def __getitem__(self, index: slice) -> List[Purchase]: ...
    def __iter__(self) -> Iterator[Purchase]: ...
