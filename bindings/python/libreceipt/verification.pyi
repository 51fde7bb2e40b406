import datetime
from typing import Iterable, List, Literal, Optional, Union

from . import Receipt

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
    @property
    def valid(self) -> bool: ...
    def step(self, name: str) -> Step: ...
    def to_json(self, pretty: bool = ...) -> str: ...

class Verifier:
    def __init__(self, bundle_id: Optional[str] = ..., application_version: Optional[str] = ...,
                 device_id: Optional[Buffer] = ..., allow_xcode: bool = ..., apple_root: bool = ...,
                 anchors: Iterable[Buffer] = ..., now: Union[datetime.datetime, int, None] = ...,
                 environment: Optional[Literal["production", "sandbox"]] = ...) -> None: ...
    def verify(self, receipt: Receipt) -> Verification: ...
    def verify_bytes(self, data: Union[Buffer, str]) -> Verification: ...
