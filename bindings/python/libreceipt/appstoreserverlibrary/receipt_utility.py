"""Apple's `receipt_utility` module: `ReceiptUtility`, which reads the transaction id a receipt
carries so that a server can ask the App Store Server API about it.

As Apple's, `extract_transaction_id_from_app_receipt` and
`extract_transaction_id_from_transaction_receipt` read without verifying (Apple's documentation:
"NO validation is performed on the receipt, and any data returned should only be used to call the
App Store Server API"): the id is only a key for the API, whose answers libreceipt verifies. The app
receipt is read by libreceipt's core (its parser, which bounds every length); a malformed one raises
ValueError, as Apple's does.

libreceipt's verifying extraction stays under its own name:
`extract_verified_transaction_id_from_app_receipt` verifies the receipt first (by `verifier`: by
default Apple's root only; pass a libreceipt.Verifier with allow_xcode=True for Xcode's receipts) and
raises VerificationException for one that does not verify."""
import base64
import re

from .. import Receipt
from .._errors import ReceiptError
from ..verification import Verifier
from .signed_data_verifier import VerificationException, _refusal

# Apple's patterns for the iOS 6 transaction receipt (an old-style plist as base64, whose
# "purchase-info" is base64 of another).
_PURCHASE_INFO = re.compile(r'"purchase-info"\s+=\s+"([a-zA-Z0-9+/=]+)";')
_TRANSACTION_ID = re.compile(r'"transaction-id"\s+=\s+"([a-zA-Z0-9+/=]+)";')


def _first_transaction_id(receipt):
    purchases = receipt.purchases
    return purchases[0].transaction_id if len(purchases) else None


class ReceiptUtility:
    def __init__(self, verifier=None):
        self._verifier = verifier

    def extract_transaction_id_from_app_receipt(self, app_receipt):
        """The first in-app purchase's transaction id of an app receipt (base64 text), None when it
        has none. NOT verified, as Apple's: use the id only to call the App Store Server API."""
        try:
            with Receipt(app_receipt) as receipt:
                return _first_transaction_id(receipt)
        except ReceiptError as error:
            raise ValueError(error) from error

    def extract_transaction_id_from_transaction_receipt(self, transaction_receipt):
        """The transaction id of an iOS 6 transaction receipt (base64 text), None when it names
        none. NOT verified, as Apple's: use the id only to call the App Store Server API."""
        decoded_top_level = base64.b64decode(transaction_receipt).decode("utf-8")
        found = _PURCHASE_INFO.search(decoded_top_level)
        if found:
            inner = _TRANSACTION_ID.search(base64.b64decode(found.group(1)).decode("utf-8"))
            if inner:
                return inner.group(1)
        return None

    def extract_verified_transaction_id_from_app_receipt(self, app_receipt):
        """libreceipt's: the first purchase's transaction id of an app receipt (base64 text or
        bytes) once it verified, None when it has no purchase. One that does not verify raises
        VerificationException; bytes that are no app receipt raise ValueError."""
        verifier = self._verifier if self._verifier is not None else Verifier()
        try:
            receipt = Receipt(app_receipt)
        except ReceiptError as error:
            raise ValueError(f"not an app receipt: {error}") from error
        with receipt:
            verification = verifier.verify(receipt)
            if not verification.valid:
                raise _refusal(verification)
            return _first_transaction_id(receipt)


__all__ = ["ReceiptUtility"]
