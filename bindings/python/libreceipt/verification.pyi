import datetime
from typing import Any, Callable, Dict, Iterable, List, Literal, Optional, Tuple, Union

from . import Receipt
from .jws import JWS

Buffer = Union[bytes, bytearray, memoryview]

class Step:
    name: str
    outcome: Literal["passed", "skipped", "failed"]
    status: int
    status_name: str
    detail: str

class Verification:
    status: int
    status_name: str
    steps: List[Step]
    jws: Optional[JWS]
    @property
    def payload(self) -> Optional[Dict[str, Any]]: ...
    @property
    def unverified_payload(self) -> Optional[Dict[str, Any]]: ...
    @property
    def valid(self) -> bool: ...
    @property
    def fingerprint(self) -> str: ...
    def step(self, name: str) -> Step: ...
    def to_json(self, pretty: bool = ...) -> str: ...

class Verifier:
    def __init__(self, bundle_id: Optional[str] = ..., application_version: Optional[str] = ...,
                 device_id: Optional[Buffer] = ..., allow_xcode: bool = ..., apple_root: bool = ...,
                 anchors: Iterable[Buffer] = ..., now: Union[datetime.datetime, int, None] = ...,
                 environment: Optional[Literal["production", "sandbox", "xcode", "local-testing"]] = ...,
                 app_apple_id: Optional[int] = ..., revocation: Literal["off", "soft", "hard"] = ...,
                 ocsp_transport: Optional[Callable[[str, bytes, float], Tuple[int, bytes]]] = ...,
                 ocsp_timeout: float = ...) -> None: ...
    revocation: str
    def check_revocation(self, token: Union[str, Buffer]) -> List[Tuple[str, str]]: ...
    def verify(self, receipt: Receipt) -> Verification: ...
    def verify_bytes(self, data: Union[Buffer, str]) -> Verification: ...
    def verify_jws(self, token: Union[str, Buffer], kind: Optional[str] = None) -> Verification: ...
