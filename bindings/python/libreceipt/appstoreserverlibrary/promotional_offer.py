"""Apple's `promotional_offer` module: `PromotionalOfferSignatureCreator` (the original
promotional offer signature), made by libreceipt's core (`libreceipt.api`), taking the key id as
Apple's does (see jws_signature_creator)."""
from .. import api as _api


class PromotionalOfferSignatureCreator(_api.PromotionalOfferSignatureCreator):
    _id_form = _api.IDS_HEADER_SAFE


__all__ = ["PromotionalOfferSignatureCreator"]
