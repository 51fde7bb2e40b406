"""Apple's `promotional_offer` module: `PromotionalOfferSignatureCreator` (the original
promotional offer signature), made by libreceipt's core (`libreceipt.api`)."""
from ..api import PromotionalOfferSignatureCreator

__all__ = ["PromotionalOfferSignatureCreator"]
