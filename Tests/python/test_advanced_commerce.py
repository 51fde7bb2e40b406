"""The Advanced Commerce API's server calls (cancel, revoke, refund request, change metadata, change
price, migrate) through libreceipt's client: Apple's paths and request bodies on the wire (Apple's
own request samples when ../shared is beside this checkout, Apple's request models otherwise),
arguments Apple would refuse refused before sending, and answers verified, against the mock of
tools/mock_appstore_api.py."""
import json
import pathlib
import subprocess
import uuid

import pytest

from libreceipt import ReceiptError
from libreceipt.api import APIException, AppStoreServerAPIClient

from test_server_api import (BUNDLE_ID, CLI, ISSUER_ID, KEY_ID, ORIGINAL, ca_verifier, mock,  # noqa: F401 (fixture)
                             needs_cli, run_cli)

MODELS = pathlib.Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "apple-library-tests" / "models"

# Apple's method, the path after /advancedCommerce/v1/, Apple's request sample.
CALLS = [
    ("cancel_subscription", "subscription/cancel", "advancedCommerceSubscriptionCancelRequest.json"),
    ("revoke_subscription", "subscription/revoke", "advancedCommerceSubscriptionRevokeRequest.json"),
    ("request_transaction_refund", "transaction/requestRefund", "advancedCommerceRequestRefundRequest.json"),
    ("change_subscription_metadata", "subscription/changeMetadata", "advancedCommerceSubscriptionChangeMetadataRequest.json"),
    ("change_subscription_price", "subscription/changePrice", "advancedCommerceSubscriptionPriceChangeRequest.json"),
    ("migrate_subscription", "subscription/migrate", "advancedCommerceSubscriptionMigrateRequest.json"),
]


def capturing_client(mock, sent):
    """A client whose transport records each request and answers Apple's 404."""
    base, key, root, _ = mock

    def transport(method, url, headers, body, timeout):
        sent.append((method, url, json.loads(body) if body else None))
        return 404, {}, b'{"errorCode": 4040010, "errorMessage": "Transaction id not found."}'
    return AppStoreServerAPIClient(key, KEY_ID, ISSUER_ID, BUNDLE_ID, "sandbox", base_url=base,
                                   verifier=ca_verifier(root), transport=transport, retries=0)


@pytest.mark.skipif(not MODELS.is_dir(), reason="../shared/fixtures/apple-library-tests is absent")
@pytest.mark.parametrize("method, path, sample", CALLS, ids=[call[0] for call in CALLS])
def test_apples_request_samples_go_on_the_wire_as_they_are(mock, method, path, sample):
    request = json.loads((MODELS / sample).read_text())
    sent = []
    with pytest.raises(APIException):
        getattr(capturing_client(mock, sent), method)("4124214", request)
    assert [(m, url.split("://", 1)[1].split("/", 1)[1]) for m, url, _ in sent] == [
        ("POST", f"advancedCommerce/v1/{path}/4124214")]
    assert sent[0][2] == request


def test_apples_request_models_and_a_verified_answer(mock):
    models = pytest.importorskip("appstoreserverlibrary.models.AdvancedCommerceSubscriptionRevokeRequest",
                                 reason="Apple's app-store-server-library is not installed")
    from appstoreserverlibrary.models.AdvancedCommerceRefundReason import AdvancedCommerceRefundReason
    from appstoreserverlibrary.models.AdvancedCommerceRefundType import AdvancedCommerceRefundType
    from appstoreserverlibrary.models.AdvancedCommerceRequestInfo import AdvancedCommerceRequestInfo
    base, key, root, requests = mock
    client = AppStoreServerAPIClient(key, KEY_ID, ISSUER_ID, BUNDLE_ID, "sandbox", base_url=base,
                                     verifier=ca_verifier(root))
    reference = uuid.uuid4()
    before = len(requests())
    answer = client.revoke_subscription(ORIGINAL, models.AdvancedCommerceSubscriptionRevokeRequest(
        requestInfo=AdvancedCommerceRequestInfo(requestReferenceId=reference), refundRiskingPreference=True,
        refundType=AdvancedCommerceRefundType.FULL, refundReason=AdvancedCommerceRefundReason.LEGAL))
    seen = requests()[before:]
    assert seen[0]["path"] == f"/advancedCommerce/v1/subscription/revoke/{ORIGINAL}"
    assert seen[0]["body"] == {"requestInfo": {"requestReferenceId": str(reference)}, "refundRiskingPreference": True,
                               "refundType": "FULL", "refundReason": "LEGAL"}
    # The answer's signed members, verified, beside them.
    assert answer["transaction_info"]["revocationType"] == "REFUND_FULL"
    assert answer["renewal_info"]["originalTransactionId"] == ORIGINAL
    refund = client.request_transaction_refund(ORIGINAL, {
        "requestInfo": {"requestReferenceId": str(uuid.uuid4())}, "refundRiskingPreference": False,
        "items": [{"SKU": "sku", "revoke": True, "refundReason": "OTHER", "refundType": "FULL"}]})
    assert "transaction_info" in refund and "renewal_info" not in refund


@pytest.mark.parametrize("method, request_body, says", [
    ("cancel_subscription", {}, "requestInfo"),
    ("cancel_subscription", {"requestInfo": {"requestReferenceId": "not-a-uuid"}}, "requestInfo.requestReferenceId"),
    ("revoke_subscription", {"requestInfo": {"requestReferenceId": str(uuid.UUID(int=1))}, "refundRiskingPreference": True,
                             "refundType": "HALF", "refundReason": "LEGAL"}, "refundType must be one of FULL"),
    ("change_subscription_price", {"requestInfo": {"requestReferenceId": str(uuid.UUID(int=1))}, "items": []}, "items"),
    ("change_subscription_price", {"requestInfo": {"requestReferenceId": str(uuid.UUID(int=1))},
                                   "items": [{"SKU": "a", "price": 1}], "currency": "usd"}, "ISO 4217"),
    ("migrate_subscription", {"requestInfo": {"requestReferenceId": str(uuid.UUID(int=1))},
                              "descriptors": {"description": "d", "displayName": "x" * 31},
                              "items": [{"SKU": "a", "description": "d", "displayName": "n"}],
                              "targetProductId": "p", "taxCode": "t"}, "descriptors.displayName"),
])
def test_what_apple_would_refuse_is_refused_before_sending(mock, method, request_body, says):
    sent = []
    with pytest.raises(ReceiptError) as refused:
        getattr(capturing_client(mock, sent), method)(ORIGINAL, request_body)
    assert says in str(refused.value) and sent == []


@needs_cli
def test_the_cli_cancels_a_subscription(mock, tmp_path):
    arguments = json.dumps({"requestInfo": {"requestReferenceId": str(uuid.uuid4())}, "storefront": "USA"})
    done = run_cli(mock, "api", "cancel_subscription", f"transactionId={ORIGINAL}", "--json", arguments,
                   key_file=tmp_path / "key.p8")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["transaction_info"]["originalTransactionId"] == ORIGINAL and "renewal_info" in answer
    listed = subprocess.run([CLI, "api", "--list"], capture_output=True, text=True, timeout=60)
    assert all(method in listed.stdout for method, _, _ in CALLS)


# ------------------------------------------------- in-app requests (signed for StoreKit)

def apple_in_app_requests():
    """Apple's four in-app request models, built with Apple's own classes (its package installed)."""
    pytest.importorskip("appstoreserverlibrary.models.AdvancedCommerceOneTimeChargeCreateRequest",
                        reason="Apple's app-store-server-library is not installed")
    import importlib

    def apple(name):  # Apple's model class `name`, from its module of the same name
        return getattr(importlib.import_module(f"appstoreserverlibrary.models.{name}"), name)
    info = apple("AdvancedCommerceRequestInfo")(requestReferenceId=uuid.UUID(int=7))
    offer = apple("AdvancedCommerceOffer")(period=apple("AdvancedCommerceOfferPeriod").P1W, periodCount=2, price=0,
                                          reason=apple("AdvancedCommerceOfferReason").ACQUISITION)
    return [
        apple("AdvancedCommerceOneTimeChargeCreateRequest")(
            requestInfo=info, currency="USD", taxCode="C003-00-2", storefront="USA",
            item=apple("AdvancedCommerceOneTimeChargeItem")(SKU="sku.1", description="One report", displayName="Report",
                                                           price=4990)),
        apple("AdvancedCommerceSubscriptionCreateRequest")(
            requestInfo=info, currency="USD", taxCode="C003-00-2", period=apple("AdvancedCommercePeriod").P1M,
            descriptors=apple("AdvancedCommerceDescriptors")(description="Pro plan", displayName="Pro"),
            items=[apple("AdvancedCommerceSubscriptionCreateItem")(SKU="sku.pro", description="Pro plan",
                                                                  displayName="Pro", price=9990, offer=offer)]),
        apple("AdvancedCommerceSubscriptionModifyInAppRequest")(
            requestInfo=info, transactionId="2000000000000001", retainBillingCycle=True,
            changeItems=[apple("AdvancedCommerceSubscriptionModifyChangeItem")(
                SKU="sku.max", currentSKU="sku.pro", description="Max plan", displayName="Max", price=19990,
                reason=apple("AdvancedCommerceReason").UPGRADE, effective=apple("AdvancedCommerceEffective").IMMEDIATELY)],
            periodChange=apple("AdvancedCommerceSubscriptionModifyPeriodChange")(
                effective=apple("AdvancedCommerceEffective").NEXT_BILL_CYCLE, period=apple("AdvancedCommercePeriod").P1Y)),
        apple("AdvancedCommerceSubscriptionReactivateInAppRequest")(
            requestInfo=info, transactionId="2000000000000001",
            items=[apple("AdvancedCommerceSubscriptionReactivateItem")(SKU="sku.pro")]),
    ]


def signed_request(token):
    import base64
    payload = token.split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    return json.loads(base64.b64decode(claims["request"]))


def test_apples_in_app_request_models_sign_as_apples_library_signs_them(mock):
    from appstoreserverlibrary.jws_signature_creator import AdvancedCommerceAPIInAppSignatureCreator as Apples
    from libreceipt.api import AdvancedCommerceAPIInAppSignatureCreator as Ours
    key = mock[1]
    for request in apple_in_app_requests():
        theirs = signed_request(Apples(key, KEY_ID, ISSUER_ID, BUNDLE_ID).create_signature(request))
        ours = signed_request(Ours(key, KEY_ID, ISSUER_ID, BUNDLE_ID).create_signature(request))
        assert ours == theirs, type(request).__name__
        assert ours["operation"] in ("CREATE_ONE_TIME_CHARGE", "CREATE_SUBSCRIPTION", "MODIFY_SUBSCRIPTION",
                                     "REACTIVATE_SUBSCRIPTION") and ours["version"] == "1"


ONE_TIME = {"operation": "CREATE_ONE_TIME_CHARGE", "version": "1", "currency": "USD", "taxCode": "C003-00-2",
            "requestInfo": {"requestReferenceId": str(uuid.UUID(int=7))},
            "item": {"SKU": "sku.1", "description": "One report", "displayName": "Report", "price": 4990}}


@pytest.mark.parametrize("change, says", [
    ({"operation": "BUY_EVERYTHING"}, "operation must be one of CREATE_ONE_TIME_CHARGE"),
    ({"operation": None}, "none given"),
    ({"version": "2"}, "version must be one of 1"),
    ({"requestInfo": None}, "requestInfo is required"),
    ({"item": dict(ONE_TIME["item"], displayName="x" * 31)}, "item.displayName must be 1 to 30 characters"),
    ({"item": dict(ONE_TIME["item"], price=-1)}, "item.price must be an integer from 0"),
    ({"currency": "usd"}, "currency must be an ISO 4217 code"),
    ({"items": []}, "items is not a member here"),
    # Apple's own sample names "transactionId" as the id: its server refuses what is not digits.
    ({"operation": "REACTIVATE_SUBSCRIPTION", "transactionId": "transactionId", "currency": None, "taxCode": None,
      "item": None}, "transactionId must be 1 to 20 digits"),
])
def test_an_in_app_request_apple_would_refuse_is_not_signed(mock, change, says):
    from libreceipt.api import AdvancedCommerceAPIInAppSignatureCreator
    request = {name: value for name, value in dict(ONE_TIME, **change).items() if value is not None}
    with pytest.raises(ReceiptError) as refused:
        AdvancedCommerceAPIInAppSignatureCreator(mock[1], KEY_ID, ISSUER_ID, BUNDLE_ID).create_signature(request)
    assert says in str(refused.value)
    assert isinstance(refused.value, ValueError)  # what callers of Apple's library catch
