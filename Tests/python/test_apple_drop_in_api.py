"""The drop-in for Apple's API client and signature creators (libreceipt.appstoreserverlibrary's
api_client, promotional_offer, jws_signature_creator), called as Apple's library is called, with
Apple's own request models, against the mock of tools/mock_appstore_api.py."""
import asyncio
import pathlib

import pytest

from libreceipt import api
from libreceipt.appstoreserverlibrary import api_client, jws_signature_creator, promotional_offer

from test_server_api import BUNDLE_ID, ISSUER_ID, KEY_ID, ORIGINAL, ca_verifier, mock  # noqa: F401 (fixture)

FIRST = "2000000000000100"  # the mock customer's first transaction
models = pytest.importorskip("appstoreserverlibrary.models.TransactionHistoryRequest",
                             reason="Apple's app-store-server-library is not installed (make venv installs it)")


def apple_style_client(mock, cls=api_client.AppStoreServerAPIClient):
    base, key, root, _ = mock
    return cls(key, KEY_ID, ISSUER_ID, BUNDLE_ID, "sandbox", base_url=base, verifier=ca_verifier(root))


def apple_verifier(mock):
    """Apple's way of reading a signed member: a SignedDataVerifier (here the drop-in's) on the mock's CA."""
    from libreceipt.appstoreserverlibrary.signed_data_verifier import SignedDataVerifier
    return SignedDataVerifier([mock[2]], False, "Sandbox", BUNDLE_ID)


def test_answers_are_apples_response_models(mock):
    client = apple_style_client(mock)
    request = models.TransactionHistoryRequest(sort=models.Order.DESCENDING,
                                               productTypes=[models.ProductType.AUTO_RENEWABLE])
    response = client.get_transaction_history(ORIGINAL, None, request)
    from appstoreserverlibrary.models.Environment import Environment
    from appstoreserverlibrary.models.HistoryResponse import HistoryResponse
    from appstoreserverlibrary.models.TransactionInfoResponse import TransactionInfoResponse
    assert type(response) is HistoryResponse
    assert response.hasMore is True and isinstance(response.revision, str)
    assert response.environment is Environment.SANDBOX and response.rawEnvironment == "Sandbox"
    assert len(response.signedTransactions) == 20 and all(t.startswith("ey") for t in response.signedTransactions)
    # Each signed member verified before the call returned; decoded as Apple's documentation does.
    transactions = [apple_verifier(mock).verify_and_decode_signed_transaction(t) for t in response.signedTransactions]
    ids = [transaction.transactionId for transaction in transactions]
    assert ids == sorted(ids, reverse=True)
    info = client.get_transaction_info(FIRST)
    assert type(info) is TransactionInfoResponse
    assert apple_verifier(mock).verify_and_decode_signed_transaction(info.signedTransactionInfo) \
        .originalTransactionId == ORIGINAL


def test_iterators_yield_apples_decoded_models(mock):
    from appstoreserverlibrary.models.JWSTransactionDecodedPayload import JWSTransactionDecodedPayload
    transactions = list(apple_style_client(mock).iter_transaction_history(ORIGINAL))
    assert transactions and all(type(t) is JWSTransactionDecodedPayload for t in transactions)
    assert {t.originalTransactionId for t in transactions} == {ORIGINAL}


def test_refusals_are_apples_exception_with_apples_codes(mock):
    with pytest.raises(api_client.APIException) as refused:
        apple_style_client(mock).get_transaction_info("2000000000099999")
    assert refused.value.http_status_code == 404
    assert refused.value.api_error == api_client.APIError.TRANSACTION_ID_NOT_FOUND
    assert refused.value.raw_api_error == 4040010


def test_the_async_client_answers_alike(mock):
    client = apple_style_client(mock, api_client.AsyncAppStoreServerAPIClient)
    info = asyncio.run(client.get_transaction_info(FIRST))
    assert type(info).__name__ == "TransactionInfoResponse"
    assert apple_verifier(mock).verify_and_decode_signed_transaction(info.signedTransactionInfo) \
        .originalTransactionId == ORIGINAL


def test_apples_module_names_lead_to_libreceipts_classes():
    assert api_client.GetTransactionHistoryVersion is api.GetTransactionHistoryVersion
    # Subclasses that take Apple's arguments (test_apples_placeholder_ids_are_taken_...), nothing else.
    for drop_in, own in ((promotional_offer.PromotionalOfferSignatureCreator, api.PromotionalOfferSignatureCreator),
                         (jws_signature_creator.PromotionalOfferV2SignatureCreator, api.PromotionalOfferV2SignatureCreator),
                         (jws_signature_creator.IntroductoryOfferEligibilitySignatureCreator,
                          api.IntroductoryOfferEligibilitySignatureCreator),
                         (jws_signature_creator.AdvancedCommerceAPIInAppSignatureCreator,
                          api.AdvancedCommerceAPIInAppSignatureCreator),
                         (api_client.AppStoreServerAPIClient, api.AppStoreServerAPIClient),
                         (api_client.AsyncAppStoreServerAPIClient, api.AsyncAppStoreServerAPIClient)):
        assert issubclass(drop_in, own) and set(vars(drop_in)) - {"__module__", "__doc__", "_id_form"} <= \
            {"_invoke", "_items"}, drop_in
        assert drop_in._id_form == api.IDS_HEADER_SAFE and own._id_form == api.IDS_APP_STORE_CONNECT


def test_apples_placeholder_ids_are_taken_and_what_breaks_a_header_is_not(mock):
    """#58 item 4: Apple's library takes key id `keyId`, issuer id `issuerId` and any bundle id (Apple's
    server answers 401 or 404); so does the drop-in, and its token carries them. libreceipt.api stays
    strict. Either refuses before any token what would leak a secret or break a header."""
    import base64
    import json
    from libreceipt import ReceiptError
    key = mock[1]
    creator = jws_signature_creator.PromotionalOfferV2SignatureCreator(key, "keyId", "issuerId", "com.unknown")
    header, claims = (json.loads(base64.urlsafe_b64decode(part + "==")) for part in
                      creator.create_signature("productId", "offerIdentifier").split(".")[:2])
    assert (header["kid"], claims["iss"], claims["bid"]) == ("keyId", "issuerId", "com.unknown")
    assert promotional_offer.PromotionalOfferSignatureCreator(key, "keyId", "bundleId").create_signature(
        "productId", "offerId", "user", "20fba8a0-2b80-4a7d-a17f-85c1854727f8", 1698148900000)
    api_client.AppStoreServerAPIClient(key, "keyId", "issuerId", "com.example", "sandbox")
    with pytest.raises(ReceiptError, match="key id must be"):
        api.AppStoreServerAPIClient(key, "keyId", "issuerId", "com.example", "sandbox")
    with pytest.raises(ReceiptError, match="issuer id must be"):
        api.PromotionalOfferV2SignatureCreator(key, KEY_ID, "issuerId", "com.example")
    for key_id, issuer_id, bundle_id, says in (
            ("key Id", "issuerId", "b", "whitespace"), ("keyId\r\n", "issuerId", "b", "whitespace"),
            ("key\x7fId", "issuerId", "b", "control"), (key.decode(), "issuerId", "b", "key id"),
            ("keyId", "-----BEGIN PRIVATE KEY-----", "b", "issuer id"), ("K" * 65, "issuerId", "b", "64"),
            ("keyId", "issuerId", "com.example\tapp", "bundle id"), ("keyId", " ", "b", "empty")):
        for cls in (api_client.AppStoreServerAPIClient, api_client.AsyncAppStoreServerAPIClient, api.AppStoreServerAPIClient):
            with pytest.raises(ReceiptError, match=says):
                cls(key, key_id, issuer_id, bundle_id, "sandbox")
    api_client.AppStoreServerAPIClient(key, "K" * 64, "issuerId", "b", "sandbox")


XCODE_RECEIPTS = (pathlib.Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "apple-library-tests" / "xcode")


@pytest.mark.skipif(not XCODE_RECEIPTS.is_dir(), reason="../shared/fixtures/apple-library-tests is absent")
def test_receipt_utility_reads_as_apples_and_verifies_under_its_own_name():
    from libreceipt import Verifier
    from libreceipt.appstoreserverlibrary.receipt_utility import ReceiptUtility
    from libreceipt.appstoreserverlibrary.signed_data_verifier import VerificationException
    with_one = (XCODE_RECEIPTS / "xcode-app-receipt-with-transaction").read_text()
    empty = (XCODE_RECEIPTS / "xcode-app-receipt-empty").read_text()
    # Apple's methods read without verifying (Apple's tests/test_receipt_utility.py): the id is only
    # a key for the API, whose answers are verified.
    assert ReceiptUtility().extract_transaction_id_from_app_receipt(with_one) == "0"
    assert ReceiptUtility().extract_transaction_id_from_app_receipt(empty) is None
    with pytest.raises(ValueError):
        ReceiptUtility().extract_transaction_id_from_app_receipt("bm90IGEgcmVjZWlwdA==")
    legacy = (XCODE_RECEIPTS.parent / "mock_signed_data" / "legacyTransaction").read_text()
    assert ReceiptUtility().extract_transaction_id_from_transaction_receipt(legacy) == "33993399"
    # libreceipt's verifying extraction: under Xcode's certificate Apple's answers; by default only
    # Apple's root is trusted, and Xcode's receipt is refused, not read.
    trusting_xcode = ReceiptUtility(Verifier(allow_xcode=True))
    assert trusting_xcode.extract_verified_transaction_id_from_app_receipt(with_one) == "0"
    assert trusting_xcode.extract_verified_transaction_id_from_app_receipt(empty) is None
    with pytest.raises(VerificationException) as refused:
        ReceiptUtility().extract_verified_transaction_id_from_app_receipt(with_one)
    assert refused.value.receipt_status == "RECEIPT_E_CHAIN_UNTRUSTED"
    with pytest.raises(ValueError):
        ReceiptUtility().extract_verified_transaction_id_from_app_receipt("not a receipt")


@pytest.mark.parametrize("call, arguments, code", [
    ("get_transaction_info", ("12x",), "INVALID_TRANSACTION_ID"),
    ("get_transaction_history", ("2000000000000001", None, {"sort": "UP"}), "INVALID_SORT"),
    ("set_app_account_token", ("2000000000000001", {"appAccountToken": "nope"}), "INVALID_APP_ACCOUNT_TOKEN_UUID_ERROR"),
    ("extend_subscription_renewal_date", ("2000000000000001", {"extendByDays": 91, "extendReasonCode": 1,
                                                               "requestIdentifier": "r"}), "INVALID_EXTEND_BY_DAYS"),
    ("get_transaction_history", ("2000000000000001", None, {"productTypes": ["AUTO_RENEWABLE", "BOOKS"]}),
     "INVALID_PRODUCT_TYPE"),
])
def test_arguments_apple_refuses_raise_apples_exception_before_sending(mock, call, arguments, code):
    before = len(mock[3]())
    with pytest.raises(api_client.APIException) as refused:
        getattr(apple_style_client(mock), call)(*arguments)
    assert (refused.value.http_status_code, refused.value.api_error) == (400, api_client.APIError[code])
    assert isinstance(refused.value, ValueError) and refused.value.name == "RECEIPT_E_INVALID_ARGUMENT"
    assert mock[3]()[before:] == []  # nothing sent


def test_an_argument_apple_names_no_error_for_stays_a_receipt_error(mock):
    from libreceipt import ReceiptError
    with pytest.raises(ReceiptError) as refused:
        apple_style_client(mock).get_transaction_history("2000000000000001", None, {"nonsense": 1})
    assert not isinstance(refused.value, api_client.APIException)
