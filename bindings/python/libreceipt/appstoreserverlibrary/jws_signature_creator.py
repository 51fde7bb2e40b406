"""Apple's `jws_signature_creator` module: the JWS signature creators of promotional offers
(V2), introductory offer eligibility and Advanced Commerce in-app requests, made by
libreceipt's core (`libreceipt.api`), and `AdvancedCommerceAPIInAppRequest`, the base of the
in-app request models (any attrs class, or a dict, is signed as its members). As Apple's, they
take any key id and issuer id Apple's server alone can judge (`keyId`, `issuerId`); the core still
refuses, before signing, one with whitespace, a control character or PEM armour, or of more than
64 characters."""
from .. import api as _api


class AdvancedCommerceAPIInAppRequest:
    """The base of Apple's Advanced Commerce in-app request models."""


class PromotionalOfferV2SignatureCreator(_api.PromotionalOfferV2SignatureCreator):
    _id_form = _api.IDS_HEADER_SAFE


class IntroductoryOfferEligibilitySignatureCreator(_api.IntroductoryOfferEligibilitySignatureCreator):
    _id_form = _api.IDS_HEADER_SAFE


class AdvancedCommerceAPIInAppSignatureCreator(_api.AdvancedCommerceAPIInAppSignatureCreator):
    _id_form = _api.IDS_HEADER_SAFE


__all__ = ["AdvancedCommerceAPIInAppRequest", "AdvancedCommerceAPIInAppSignatureCreator",
           "IntroductoryOfferEligibilitySignatureCreator", "PromotionalOfferV2SignatureCreator"]
