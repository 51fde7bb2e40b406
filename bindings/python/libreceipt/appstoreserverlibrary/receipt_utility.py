"""Apple's `receipt_utility` module: `ReceiptUtility`, which reads the transaction id a
receipt carries, so that a server can ask the App Store Server API about it.

Unlike Apple's, which reads without verifying, an app receipt is verified first (by
`verifier`: by default Apple's root only; pass a libreceipt.Verifier with allow_xcode=True
for Xcode's receipts), and one that does not verify raises VerificationException. An iOS 6
transaction receipt (a plist) is refused: libreceipt does not verify that format's signature,
and hands out nothing it has not verified."""
from .. import Receipt
from .._errors import ReceiptError
from ..verification import Verifier
from .signed_data_verifier import VerificationException, VerificationStatus


class ReceiptUtility:
    def __init__(self, verifier=None):
        self._verifier = verifier if verifier is not None else Verifier()

    def extract_transaction_id_from_app_receipt(self, app_receipt):
        """The first purchase's transaction id of a verified app receipt (base64 text or
        bytes), None when it has no purchase."""
        try:
            receipt = Receipt(app_receipt)
        except ReceiptError as error:
            raise ValueError(f"not an app receipt: {error}") from error
        with receipt:
            verification = self._verifier.verify(receipt)
            if not verification.valid:
                failed = next(step for step in verification.steps if step.outcome == "failed")
                raise VerificationException(VerificationStatus.VERIFICATION_FAILURE, verification.status_name,
                                            failed.detail)
            purchases = receipt.purchases
            return purchases[0].transaction_id if len(purchases) else None

    def extract_transaction_id_from_transaction_receipt(self, transaction_receipt):
        raise VerificationException(VerificationStatus.VERIFICATION_FAILURE, None,
                                    "an iOS 6 transaction receipt: libreceipt does not verify its signature, and hands "
                                    "out nothing it has not verified")
