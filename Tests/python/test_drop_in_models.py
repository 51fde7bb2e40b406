"""libreceipt.appstoreserverlibrary returns what Apple's library returns (#58 items 1 and 3): for each
of Apple's own payload samples (../shared/fixtures/apple-library-tests/models), signed with a test CA,
the drop-in's answer is an instance of Apple's model class and equal to the one Apple's
SignedDataVerifier gives for the same JWS; refusals carry the status Apple's gives for the same
input; nothing is built from a JWS whose signature does not verify."""
import copy
import datetime
import json
import os
import pathlib
import subprocess
import sys

import pytest

apple = pytest.importorskip("appstoreserverlibrary.signed_data_verifier",
                            reason="Apple's app-store-server-library is not installed (make venv installs it)")

from libreceipt.appstoreserverlibrary import signed_data_verifier as ours  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODELS = ROOT.parent / "shared" / "fixtures" / "apple-library-tests" / "models"
pytestmark = pytest.mark.skipif(not MODELS.is_dir(), reason="../shared/fixtures/apple-library-tests is absent")

sys.path.insert(0, str(ROOT / "tools"))
import mint_jws  # noqa: E402


@pytest.fixture(scope="module")
def ca_2023(tmp_path_factory):
    """A test CA made as of 2023-01-01 (Apple's samples are signed in October 2023, and both libraries
    judge the chain at the time of signing): (root DER, chains)."""
    directory = tmp_path_factory.mktemp("ca-2023")
    subprocess.run([sys.executable, "-c", "import datetime, sys, mint_jws; "
                    "mint_jws.NOW = datetime.datetime(2023, 1, 1, tzinfo=datetime.timezone.utc); "
                    "mint_jws.create_ca(sys.argv[1])", str(directory)],
                   check=True, capture_output=True, env=dict(os.environ, PYTHONPATH=str(ROOT / "tools")))
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding
    root = x509.load_pem_x509_certificate((directory / "root.pem").read_bytes()).public_bytes(Encoding.DER)
    return root, mint_jws.load_ca(str(directory))


def sample(name):
    return json.loads((MODELS / name).read_text())


def with_nested_signed(notification, chains):
    """Apple's notification sample with its nested placeholders replaced by Apple's transaction and
    renewal info (or app transaction) samples, signed (libreceipt verifies a notification's nested JWS)."""
    notification = copy.deepcopy(notification)
    data = notification.get("data") or {}
    if "signedTransactionInfo" in data:
        data["signedTransactionInfo"] = mint_jws.sign(sample("signedTransaction.json"), chains)
    if "signedRenewalInfo" in data:
        data["signedRenewalInfo"] = mint_jws.sign(sample("signedRenewalInfo.json"), chains)
    if "signedAppTransactionInfo" in (notification.get("appData") or {}):
        notification["appData"]["signedAppTransactionInfo"] = mint_jws.sign(sample("appTransaction.json"), chains)
    return notification


def both(method, token, root, environment="LocalTesting", bundle_id="com.example", app_apple_id=1234):
    """(Apple's answer, the drop-in's answer): each the model, or ("refused", status value)."""
    answers = []
    for module in (apple, ours):
        verifier = module.SignedDataVerifier([root], False, environment, bundle_id, app_apple_id)
        try:
            answers.append(getattr(verifier, "verify_and_decode_" + method)(token))
        except module.VerificationException as refusal:
            answers.append(("refused", int(refusal.status)))
    return tuple(answers)


# Apple's sample -> the verifier method that decodes it.
SAMPLES = {"signedTransaction.json": "signed_transaction", "signedTransactionWithRevocation.json": "signed_transaction",
           "signedRenewalInfo.json": "renewal_info", "appTransaction.json": "app_transaction",
           "decodedRealtimeRequest.json": "realtime_request", "signedNotification.json": "notification",
           "signedSummaryNotification.json": "notification",
           "signedConsumptionRequestNotification.json": "notification",
           "signedRescindConsentNotification.json": "notification"}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_each_sample_decodes_to_apples_model_equal_to_apples(ca_2023, name):
    root, chains = ca_2023
    payload = sample(name)
    if SAMPLES[name] == "notification":
        payload = with_nested_signed(payload, chains)
    # Apple's verifier skips verification in LocalTesting; the drop-in verifies against the CA.
    theirs, mine = both(SAMPLES[name], mint_jws.sign(payload, chains), root,
                        bundle_id=payload.get("bundleId") or "com.example", app_apple_id=None)
    assert type(mine) is type(theirs) and type(mine).__module__.startswith("appstoreserverlibrary.models.")
    assert mine == theirs
    for member in ("data", "summary", "appData", "externalPurchaseToken"):
        assert type(getattr(mine, member, None)) is type(getattr(theirs, member, None))


def test_enumerations_are_apples_members_and_unknown_values_stay_raw(ca_2023):
    from appstoreserverlibrary.models.NotificationTypeV2 import NotificationTypeV2
    from appstoreserverlibrary.models.Type import Type
    root, chains = ca_2023
    notification = with_nested_signed(sample("signedNotification.json"), chains)
    decoded = both("notification", mint_jws.sign(notification, chains), root)[1]
    assert decoded.notificationType is NotificationTypeV2.SUBSCRIBED and decoded.notificationType.name == "SUBSCRIBED"
    transaction = dict(sample("signedTransaction.json"), type="A Type Apple Adds Later")
    theirs, mine = both("signed_transaction", mint_jws.sign(transaction, chains), root)
    assert mine == theirs
    assert mine.type is None and mine.rawType == "A Type Apple Adds Later"
    assert both("signed_transaction", mint_jws.sign(sample("signedTransaction.json"), chains), root)[1].type \
        is Type.AUTO_RENEWABLE_SUBSCRIPTION


def test_nothing_is_built_from_a_signature_that_does_not_verify(ca_2023):
    root, chains = ca_2023
    for variant in ("payload-changed", "other-root", "alg-none"):
        token = mint_jws.sign(sample("signedTransaction.json"), chains, variant)
        verifier = ours.SignedDataVerifier([root], False, "LocalTesting", "com.example")
        with pytest.raises(ours.VerificationException) as refused:
            verifier.verify_and_decode_signed_transaction(token)
        assert refused.value.status == ours.VerificationStatus.VERIFICATION_FAILURE, variant


def test_statuses_are_apples_intenum_with_apples_values():
    assert issubclass(ours.VerificationStatus, int)
    assert {status.name: int(status) for status in ours.VerificationStatus} == \
        {status.name: int(status) for status in apple.VerificationStatus}
    assert str(ours.VerificationException(ours.VerificationStatus.INVALID_ENVIRONMENT)) == \
        str(apple.VerificationException(apple.VerificationStatus.INVALID_ENVIRONMENT))


def production(payload, signed):
    """`payload` moved to production, signed at `signed` (ms)."""
    payload = copy.deepcopy(payload)
    payload["signedDate"] = signed
    for part in (payload, payload.get("data") or {}):
        if "environment" in part:
            part["environment"] = "Production"
    return payload


# (what is asked of a production verifier of the sample) -> the same status from both libraries.
REFUSALS = [("another app Apple id", "com.example", 99), ("another bundle id", "com.other", 41234),
            ("both", "com.other", 99), ("a sandbox verifier", "com.example", 41234)]


@pytest.mark.parametrize("case, bundle_id, app_apple_id", REFUSALS, ids=[case[0] for case in REFUSALS])
def test_refusals_carry_apples_status(ca_2023, case, bundle_id, app_apple_id):
    root, chains = ca_2023
    signed = int(datetime.datetime(2023, 6, 1, tzinfo=datetime.timezone.utc).timestamp() * 1000)
    notification = production(sample("signedNotification.json"), signed)
    notification["data"].pop("signedTransactionInfo")
    notification["data"].pop("signedRenewalInfo")
    environment = "Sandbox" if case == "a sandbox verifier" else "Production"
    theirs, mine = both("notification", mint_jws.sign(notification, chains), root, environment, bundle_id,
                        app_apple_id)
    assert theirs[0] == "refused" and mine == theirs
    if case == "another app Apple id":
        assert mine[1] == ours.VerificationStatus.INVALID_APP_IDENTIFIER  # #58: was INVALID_ENVIRONMENT


def test_the_verdict_stands_beside_the_model(ca_2023):
    from appstoreserverlibrary.models.ResponseBodyV2DecodedPayload import ResponseBodyV2DecodedPayload
    root, chains = ca_2023
    notification = with_nested_signed(sample("signedNotification.json"), chains)
    verifier = ours.SignedDataVerifier([root], False, "LocalTesting", "com.example")
    model, verdict = verifier.verify_and_decode_with_verdict(mint_jws.sign(notification, chains), "notification")
    assert isinstance(model, ResponseBodyV2DecodedPayload) and verdict.valid
    assert verdict.step("nested").outcome == "passed" and len(verdict.fingerprint) == 64
