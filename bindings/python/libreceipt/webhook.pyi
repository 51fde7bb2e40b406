from collections.abc import Mapping

DEFAULT_TOLERANCE_SECONDS: int

def verify(secret: str, headers: Mapping[str, str], body: bytes | bytearray | memoryview, now: int | None = ...,
           tolerance_seconds: int = ...) -> str: ...
