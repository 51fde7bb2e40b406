from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from .verification import Verifier

Buffer = Union[bytes, bytearray, memoryview]
RECEIPT_FIELDS: Tuple[str, ...]
PURCHASE_FIELDS: Tuple[str, ...]

def verify_many(verifier: Verifier, inputs: Sequence[Union[Buffer, str, None]],
                with_purchases: bool = ...) -> Tuple[List[Dict[str, Any]], List[Tuple[int, Dict[str, Any]]]]: ...
