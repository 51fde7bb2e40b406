"""libreceipt.api beside Apple's own Python library (app-store-server-library, in the test venv):
the same methods and arguments; the same requests on the wire for the same calls; signed requests
that Apple's decoding stack accepts, over the same signed string and with the same claims; and the
same verified payloads from the same answers."""
import base64
import inspect
import json
import time
import uuid

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

pytest.importorskip("appstoreserverlibrary")  # in the test venv (make venv); skipped by name elsewhere
import jwt  # noqa: E402  (PyJWT, which Apple's library depends on)
from appstoreserverlibrary import api_client as apple_api  # noqa: E402
from appstoreserverlibrary import jws_signature_creator as apple_jws  # noqa: E402
from appstoreserverlibrary import promotional_offer as apple_offer  # noqa: E402
from appstoreserverlibrary.models.Environment import Environment  # noqa: E402
from appstoreserverlibrary.models.NotificationHistoryRequest import NotificationHistoryRequest  # noqa: E402
from appstoreserverlibrary.models.NotificationTypeV2 import NotificationTypeV2  # noqa: E402
from appstoreserverlibrary.models.Subtype import Subtype  # noqa: E402
from appstoreserverlibrary.models.TransactionHistoryRequest import (  # noqa: E402
    InAppOwnershipType, Order, ProductType, TransactionHistoryRequest)
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier  # noqa: E402

from libreceipt import api  # noqa: E402
from test_server_api import BUNDLE_ID, ISSUER_ID, KEY_ID, ORIGINAL, ca_verifier, mock  # noqa: E402,F401

APPLE_METHODS = sorted(name for name, member in inspect.getmembers(apple_api.AppStoreServerAPIClient)
                       if callable(member) and not name.startswith("_"))


# The Advanced Commerce API's calls: in Apple's Rust port and open pull requests, not in the Python 3.1.2 release.
ADVANCED_COMMERCE = {"cancel_subscription", "revoke_subscription", "request_transaction_refund",
                     "change_subscription_metadata", "change_subscription_price", "migrate_subscription"}


def test_every_method_of_apples_client_is_ours_with_its_arguments():
    assert sorted(set(api.CALLS) - ADVANCED_COMMERCE) == APPLE_METHODS
    assert ADVANCED_COMMERCE <= set(api.CALLS)
    for name in APPLE_METHODS:
        apple_parameters = list(inspect.signature(getattr(apple_api.AppStoreServerAPIClient, name)).parameters)
        for ours in (api.AppStoreServerAPIClient, api.AsyncAppStoreServerAPIClient):
            assert list(inspect.signature(getattr(ours, name)).parameters) == apple_parameters, name
    async_methods = sorted(name for name, member in inspect.getmembers(apple_api.AsyncAppStoreServerAPIClient)
                           if callable(member) and not name.startswith("_"))
    assert set(async_methods) - {"async_close"} == set(APPLE_METHODS)


def test_every_apple_error_code_is_named_alike():
    apple = {error.name: error.value for error in apple_api.APIError}
    ours = {error.name: error.value for error in api.APIError}
    assert ours == apple


@pytest.fixture
def both(mock):
    """(Apple's client, ours) with the same key, aimed at the mock."""
    base, key, root, _ = mock
    apple = apple_api.AppStoreServerAPIClient(key, KEY_ID, ISSUER_ID, BUNDLE_ID, Environment.SANDBOX)
    apple._base_url = base
    ours = api.AppStoreServerAPIClient(key, KEY_ID, ISSUER_ID, BUNDLE_ID, Environment.SANDBOX, base_url=base,
                                       verifier=ca_verifier(root))
    return apple, ours


def wire(mock, before):
    return [(r["method"], r["path"], r["query"], r["body"]) for r in mock[3]()[before:]]


def test_the_same_calls_put_the_same_requests_on_the_wire(mock, both):
    apple, ours = both
    history = TransactionHistoryRequest(startDate=1_700_000_000_000, endDate=1_900_000_000_000,
                                        productIds=["com.example.monthly", "com.example.yearly"],
                                        productTypes=[ProductType.AUTO_RENEWABLE, ProductType.CONSUMABLE],
                                        sort=Order.DESCENDING, subscriptionGroupIdentifiers=["21000000"],
                                        inAppOwnershipType=InAppOwnershipType.PURCHASED)
    notifications = NotificationHistoryRequest(startDate=1_700_000_000_000, endDate=1_900_000_000_000,
                                               notificationType=NotificationTypeV2.DID_RENEW,
                                               notificationSubtype=Subtype.BILLING_RECOVERY, onlyFailures=True)
    calls = [("get_transaction_history", (ORIGINAL, "rev-20", history, apple_api.GetTransactionHistoryVersion.V2)),
             ("get_notification_history", ("page-5", notifications)),
             ("get_all_subscription_statuses", (ORIGINAL, [apple_api.Status.ACTIVE, apple_api.Status.EXPIRED])),
             ("get_refund_history", (ORIGINAL, None)),
             ("get_transaction_info", ("2000000000000100",)),
             ("look_up_order_id", ("MK5TTTVWJH",)),
             ("get_app_transaction_info", (ORIGINAL,)),
             # Apple's defaults (history v1) and a start "from the beginning" (0), which Apple documents
             ("get_transaction_history", (ORIGINAL, None, TransactionHistoryRequest(startDate=0, endDate=86_400_000)))]
    for name, arguments in calls:
        before = len(mock[3]())
        getattr(apple, name)(*arguments)
        apple_wire = wire(mock, before)
        before = len(mock[3]())
        getattr(ours, name)(*arguments)  # Apple's own model objects, passed as they are
        assert wire(mock, before) == apple_wire, name
        assert mock[3]()[-1]["claims"] is not None


def test_answers_decode_to_what_apples_verifier_decodes(mock, both):
    apple, ours = both
    _, _, root, _ = mock
    from cryptography import x509
    root_der = x509.load_pem_x509_certificate(root).public_bytes(serialization.Encoding.DER)
    verifier = SignedDataVerifier([root_der], False, Environment.SANDBOX, BUNDLE_ID)
    apple_page = apple.get_transaction_history(ORIGINAL, None, TransactionHistoryRequest(),
                                               apple_api.GetTransactionHistoryVersion.V2)
    apple_decoded = [verifier.verify_and_decode_signed_transaction(token) for token in apple_page.signedTransactions]
    our_page = ours.get_transaction_history(ORIGINAL, None, TransactionHistoryRequest(),
                                            apple_api.GetTransactionHistoryVersion.V2)
    assert our_page["signedTransactions"] == apple_page.signedTransactions
    assert [t["transactionId"] for t in our_page["transactions"]] == [t.transactionId for t in apple_decoded]
    assert [t["expiresDate"] for t in our_page["transactions"]] == [t.expiresDate for t in apple_decoded]
    status = ours.get_all_subscription_statuses(ORIGINAL)["data"][0]["lastTransactions"][0]
    apple_renewal = verifier.verify_and_decode_renewal_info(status["signedRenewalInfo"])
    assert status["renewal_info"]["autoRenewProductId"] == apple_renewal.autoRenewProductId


def test_original_promotional_offer_signatures_sign_apples_string(mock):
    key = serialization.load_pem_private_key(mock[1], password=None)
    nonce = uuid.UUID("5A2A3E5C-1B0E-4D6F-9B7A-0C1D2E3F4A5B")
    arguments = ("com.example.monthly", "offer-1", "User-Token-ABC", nonce, 1_700_000_000_123)
    apple = apple_offer.PromotionalOfferSignatureCreator(mock[1], KEY_ID, BUNDLE_ID).create_signature(*arguments)
    ours = api.PromotionalOfferSignatureCreator(mock[1], KEY_ID, BUNDLE_ID).create_signature(*arguments)
    signed = "\u2063".join([BUNDLE_ID, KEY_ID, "com.example.monthly", "offer-1", "user-token-abc",
                            str(nonce).lower(), "1700000000123"]).encode()
    for signature in (apple, ours):  # ECDSA is randomized: the signatures differ, the signed string does not
        key.public_key().verify(base64.b64decode(signature), signed, ec.ECDSA(hashes.SHA256()))


@pytest.mark.parametrize("apple_class, our_class, arguments, audience", [
    (apple_jws.PromotionalOfferV2SignatureCreator, api.PromotionalOfferV2SignatureCreator,
     ("com.example.monthly", "offer-1", "2000000000000100"), "promotional-offer"),
    (apple_jws.PromotionalOfferV2SignatureCreator, api.PromotionalOfferV2SignatureCreator,
     ("com.example.monthly", "offer-1", None), "promotional-offer"),
    (apple_jws.IntroductoryOfferEligibilitySignatureCreator, api.IntroductoryOfferEligibilitySignatureCreator,
     ("com.example.monthly", False, "2000000000000100"), "introductory-offer-eligibility"),
    (apple_jws.AdvancedCommerceAPIInAppSignatureCreator, api.AdvancedCommerceAPIInAppSignatureCreator,
     ({"operation": "REACTIVATE_SUBSCRIPTION", "version": "1", "transactionId": "2000000000000001",
       "requestInfo": {"requestReferenceId": "550e8400-e29b-41d4-a716-446655440004"}},),
     "advanced-commerce-api"),
])
def test_signed_requests_have_apples_header_and_claims(mock, apple_class, our_class, arguments, audience):
    key = serialization.load_pem_private_key(mock[1], password=None)
    tokens = [cls(mock[1], KEY_ID, ISSUER_ID, BUNDLE_ID).create_signature(*arguments) for cls in (apple_class, our_class)]
    headers = [jwt.get_unverified_header(token) for token in tokens]
    assert headers[1] == headers[0] == {"alg": "ES256", "kid": KEY_ID, "typ": "JWT"}
    # pyjwt, Apple's own decoding stack, checks each signature with the key's public half.
    claims = [jwt.decode(token, key.public_key(), algorithms=["ES256"], audience=audience) for token in tokens]
    now = time.time()
    for claim in claims:
        uuid.UUID(claim.pop("nonce"))  # a new UUID in each
        assert abs(claim.pop("iat") - now) < 120
    assert claims[1] == claims[0]
    if "request" in claims[0]:
        assert json.loads(base64.b64decode(claims[1]["request"])) == arguments[0]


def test_the_readme_table_names_every_method_of_apples_client():
    import pathlib
    import re
    readme = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "app-store-server-api.md").read_text()
    rows = re.findall(r"^\| `(\w+)` \| `(\w+)` \| `(GET|POST|PUT|DELETE) (/\S+)`", readme, re.M)
    assert sorted(row[0] for row in rows if row[0] not in ADVANCED_COMMERCE) == APPLE_METHODS
    assert {row[0] for row in rows if row[3].startswith("/advancedCommerce/")} == ADVANCED_COMMERCE
    swift = (pathlib.Path(__file__).resolve().parents[2] / "Server" / "Sources" / "ReceiptServerAPIClient" /
             "AppleMethodNames.swift").read_text()
    assert all(f"public func {row[1]}(" in swift for row in rows)
