import datetime
from typing import Any, Dict, Iterable, Literal, Optional, Union

from . import Receipt
from .verification import Verifier

Buffer = Union[bytes, bytearray, memoryview]

class JWS:
    type: Literal["transaction", "renewal_info", "notification", "app_transaction", "unknown"]
    payload_json: str
    header_json: str
    @property
    def payload(self) -> Dict[str, Any]: ...
    @property
    def header(self) -> Dict[str, Any]: ...
    @property
    def signed_date(self) -> Optional[int]: ...
    @property
    def fingerprint(self) -> str: ...
    def to_json(self, pretty: bool = ...) -> str: ...

def decode_jws_unverified(token: Union[str, Buffer]) -> JWS: ...

def entitlements(at: Union[datetime.datetime, int], transactions: Iterable[Union[str, Buffer]] = ...,
                 receipt: Optional[Receipt] = ..., verifier: Optional[Verifier] = ...,
                 catalog: Optional[Dict[str, Any]] = ..., unverified: bool = ...) -> Dict[str, Any]: ...
def subscription_state(original_transaction_id: Union[str, int], tokens: Iterable[Union[str, Buffer]],
                       at: Union[datetime.datetime, int], verifier: Optional[Verifier] = ...,
                       unverified: bool = ...) -> Dict[str, Any]: ...
