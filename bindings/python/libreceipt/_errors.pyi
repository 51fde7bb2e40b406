from typing import Optional

class ReceiptError(ValueError):
    """A libreceipt failure."""
    status: int
    name: str
    message: str
    detail: str
    offset: Optional[int]
    def __init__(self, status: int, detail: str = ..., offset: Optional[int] = ...) -> None: ...

class ArgumentTypeError(TypeError, ValueError): ...
