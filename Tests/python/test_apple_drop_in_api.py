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


def test_answers_read_as_apples_models_do(mock):
    client = apple_style_client(mock)
    request = models.TransactionHistoryRequest(sort=models.Order.DESCENDING,
                                               productTypes=[models.ProductType.AUTO_RENEWABLE])
    response = client.get_transaction_history(ORIGINAL, None, request)
    assert response.hasMore is True and isinstance(response.revision, str)
    assert len(response.signedTransactions) == 20 and all(t.startswith("ey") for t in response.signedTransactions)
    # Beside Apple's members, the verified payloads: newest first, as asked.
    ids = [transaction.transactionId for transaction in response.transactions]
    assert ids == sorted(ids, reverse=True)
    assert response.environment == "Sandbox" and response.notAppleMember is None
    info = client.get_transaction_info(FIRST)
    assert info.transaction_info.originalTransactionId == ORIGINAL


def test_refusals_are_apples_exception_with_apples_codes(mock):
    with pytest.raises(api_client.APIException) as refused:
        apple_style_client(mock).get_transaction_info("2000000000099999")
    assert refused.value.http_status_code == 404
    assert refused.value.api_error == api_client.APIError.TRANSACTION_ID_NOT_FOUND
    assert refused.value.raw_api_error == 4040010


def test_the_async_client_answers_alike(mock):
    client = apple_style_client(mock, api_client.AsyncAppStoreServerAPIClient)
    info = asyncio.run(client.get_transaction_info(FIRST))
    assert info.transaction_info.originalTransactionId == ORIGINAL


def test_apples_module_names_lead_to_libreceipts_classes():
    assert api_client.GetTransactionHistoryVersion is api.GetTransactionHistoryVersion
    assert promotional_offer.PromotionalOfferSignatureCreator is api.PromotionalOfferSignatureCreator
    assert jws_signature_creator.PromotionalOfferV2SignatureCreator is api.PromotionalOfferV2SignatureCreator
    assert (jws_signature_creator.IntroductoryOfferEligibilitySignatureCreator
            is api.IntroductoryOfferEligibilitySignatureCreator)
    assert jws_signature_creator.AdvancedCommerceAPIInAppSignatureCreator is api.AdvancedCommerceAPIInAppSignatureCreator


XCODE_RECEIPTS = (pathlib.Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "apple-library-tests" / "xcode")


@pytest.mark.skipif(not XCODE_RECEIPTS.is_dir(), reason="../shared/fixtures/apple-library-tests is absent")
def test_receipt_utility_reads_only_what_verified():
    from libreceipt import Verifier
    from libreceipt.appstoreserverlibrary.receipt_utility import ReceiptUtility
    from libreceipt.appstoreserverlibrary.signed_data_verifier import VerificationException
    with_one = (XCODE_RECEIPTS / "xcode-app-receipt-with-transaction").read_text()
    empty = (XCODE_RECEIPTS / "xcode-app-receipt-empty").read_text()
    # Apple's answers (tests/test_receipt_utility.py), once the receipt verified under Xcode's certificate.
    trusting_xcode = ReceiptUtility(Verifier(allow_xcode=True))
    assert trusting_xcode.extract_transaction_id_from_app_receipt(with_one) == "0"
    assert trusting_xcode.extract_transaction_id_from_app_receipt(empty) is None
    # By default only Apple's root is trusted: Xcode's receipt is refused, not read.
    with pytest.raises(VerificationException) as refused:
        ReceiptUtility().extract_transaction_id_from_app_receipt(with_one)
    assert refused.value.receipt_status == "RECEIPT_E_CHAIN_UNTRUSTED"
    with pytest.raises(ValueError):
        ReceiptUtility().extract_transaction_id_from_app_receipt("not a receipt")
    with pytest.raises(VerificationException, match="iOS 6|Verification failed"):
        ReceiptUtility().extract_transaction_id_from_transaction_receipt("ewoJInNpZ25hdHVyZSIgPSAiQXBk")


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
