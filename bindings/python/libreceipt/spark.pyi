from typing import Iterable, Literal, Optional, Union

from pyspark.sql import DataFrame

Buffer = Union[bytes, bytearray, memoryview]

def receipts(df: DataFrame, column: str, *, bundle_id: Optional[str] = ...,
             environment: Optional[Literal["production", "sandbox", "xcode", "local-testing"]] = ...,
             allow_xcode: bool = ..., anchors: Optional[Iterable[Buffer]] = ...) -> DataFrame: ...
def purchases(df: DataFrame, column: str, *, bundle_id: Optional[str] = ...,
              environment: Optional[Literal["production", "sandbox", "xcode", "local-testing"]] = ...,
              allow_xcode: bool = ..., anchors: Optional[Iterable[Buffer]] = ...) -> DataFrame: ...
