"""Apple's `jws_signature_creator` module: the JWS signature creators of promotional offers
(V2), introductory offer eligibility and Advanced Commerce in-app requests, made by
libreceipt's core (`libreceipt.api`), and `AdvancedCommerceAPIInAppRequest`, the base of the
in-app request models (any attrs class, or a dict, is signed as its members)."""
from ..api import (AdvancedCommerceAPIInAppSignatureCreator, IntroductoryOfferEligibilitySignatureCreator,
                   PromotionalOfferV2SignatureCreator)


class AdvancedCommerceAPIInAppRequest:
    """The base of Apple's Advanced Commerce in-app request models."""


__all__ = ["AdvancedCommerceAPIInAppRequest", "AdvancedCommerceAPIInAppSignatureCreator",
           "IntroductoryOfferEligibilitySignatureCreator", "PromotionalOfferV2SignatureCreator"]
