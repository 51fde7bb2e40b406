"""The drop-in for Apple's Python library (libreceipt.appstoreserverlibrary) against the
expectations of Apple's own test suite (tests/test_payload_verification.py of
app-store-server-library 3.1), on that suite's resources (../shared/fixtures/
apple-library-tests: JWS signed by Apple's test CA). Each case is one of Apple's, with
Apple's expected outcome; where libreceipt deliberately answers otherwise, DELIBERATE
says what it answers and why, and the test checks that answer instead."""
import pathlib

import pytest

from libreceipt.appstoreserverlibrary.signed_data_verifier import (SignedDataVerifier, VerificationException,
                                                                   VerificationStatus)

RESOURCES = pathlib.Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "apple-library-tests"
pytestmark = pytest.mark.skipif(not RESOURCES.is_dir(), reason="../shared/fixtures/apple-library-tests is absent")

OK = VerificationStatus.OK
NO_KEY_USAGE = ("RECEIPT_E_NOT_A_SIGNING_CERTIFICATE",
                "the token's leaf (serial 11 of Apple's test CA) has no keyUsage; libreceipt requires "
                "digitalSignature on the signer (hardening 3), which every Apple and Xcode signer carries")

# (Apple's test, method, token, environment, bundle id, app Apple id, (Apple's status, decoded member, value))
CASES = [
    ("test_app_store_server_notification_decoding", "notification", "testNotification", "Sandbox", "com.example",
     1234, (OK, "notificationType", "TEST")),
    ("test_app_store_server_notification_decoding_production", "notification", "testNotification", "Production",
     "com.example", 1234, (VerificationStatus.INVALID_ENVIRONMENT, None, None)),
    ("test_missing_x5c_header", "notification", "missingX5CHeaderClaim", "Sandbox", "com.example", 1234,
     (VerificationStatus.VERIFICATION_FAILURE, None, None)),
    ("test_wrong_bundle_id_for_server_notification", "notification", "wrongBundleId", "Sandbox", "com.examplex", 1234,
     (VerificationStatus.INVALID_APP_IDENTIFIER, None, None)),
    ("test_wrong_app_apple_id_for_server_notification", "notification", "testNotification", "Production",
     "com.example", 1235, (VerificationStatus.INVALID_APP_IDENTIFIER, None, None)),
    ("test_renewal_info_decoding", "renewal_info", "renewalInfo", "Sandbox", "com.example", 1234,
     (OK, "environment", "Sandbox")),
    ("test_transaction_info_decoding", "signed_transaction", "transactionInfo", "Sandbox", "com.example", 1234,
     (OK, "environment", "Sandbox")),
    ("test_renewal_info_invalid_environment", "renewal_info", "renewalInfo", "Production", "com.example", 1234,
     (VerificationStatus.INVALID_ENVIRONMENT, None, None)),
    ("test_transaction_info_invalid_bundle_id", "signed_transaction", "transactionInfo", "Sandbox",
     "com.different.app", 1234, (VerificationStatus.INVALID_APP_IDENTIFIER, None, None)),
    ("test_transaction_info_invalid_environment", "signed_transaction", "transactionInfo", "Production",
     "com.example", 1234, (VerificationStatus.INVALID_ENVIRONMENT, None, None)),
    ("test_malformed_jwt_with_too_many_parts", "notification", "a.b.c.d", "Sandbox", "com.example", 1234,
     (VerificationStatus.VERIFICATION_FAILURE, None, None)),
    ("test_malformed_jwt_with_malformed_data", "notification", "a.b.c", "Sandbox", "com.example", 1234,
     (VerificationStatus.VERIFICATION_FAILURE, None, None)),
]

# Apple's test → (libreceipt's status name, why libreceipt answers so).
DELIBERATE = {
    "test_app_store_server_notification_decoding": NO_KEY_USAGE,
    "test_app_store_server_notification_decoding_production": NO_KEY_USAGE,
    "test_wrong_app_apple_id_for_server_notification": NO_KEY_USAGE,
    "test_transaction_info_decoding": NO_KEY_USAGE,
    "test_transaction_info_invalid_bundle_id": NO_KEY_USAGE,
    "test_transaction_info_invalid_environment": NO_KEY_USAGE,
    "test_wrong_bundle_id_for_server_notification": (
        "RECEIPT_E_NO_CREATION_DATE", "the token has no signedDate: Apple judges its chain at the current time, "
        "libreceipt at the time of signing only, and fails closed without one"),
}


def token_of(name):
    path = RESOURCES / "mock_signed_data" / name
    return path.read_text().strip() if path.is_file() else name


def verifier(environment, bundle_id, app_apple_id):
    """Apple's tests/util.py get_signed_data_verifier: Apple's test CA, no online checks."""
    return SignedDataVerifier([(RESOURCES / "certs" / "testCA.der").read_bytes()], False, environment, bundle_id,
                              app_apple_id)


def outcome(method, token, environment, bundle_id, app_apple_id):
    """(Apple's status, libreceipt's status name or None, decoded payload or None)."""
    try:
        decoded = getattr(verifier(environment, bundle_id, app_apple_id), "verify_and_decode_" + method)(token)
        return OK, None, decoded
    except VerificationException as refusal:
        assert str(refusal) == "Verification failed with status " + refusal.status.name
        return refusal.status, refusal.receipt_status, None


@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_apples_expectation(case):
    name, method, token, environment, bundle_id, app_apple_id, (expected, member, value) = case
    status, receipt_status, decoded = outcome(method, token_of(token), environment, bundle_id, app_apple_id)
    if name in DELIBERATE:
        ours, why = DELIBERATE[name]
        assert (status, receipt_status) == (VerificationStatus.VERIFICATION_FAILURE, ours), why
        return
    assert status == expected, receipt_status
    if member:
        assert getattr(decoded, member) == value


def test_the_count_of_apples_cases_answered_alike():
    alike = [case[0] for case in CASES if case[0] not in DELIBERATE]
    print(f"Apple's signed-data verifier cases: {len(alike)} of {len(CASES)} answered as Apple's; "
          f"{len(DELIBERATE)} deliberately otherwise")
    assert len(alike) + len(DELIBERATE) == len(CASES)


def test_production_verifier_requires_app_apple_id():
    with pytest.raises(ValueError, match="appAppleId is required when the environment is Production"):
        SignedDataVerifier(root_certificates=[], enable_online_checks=False, environment="Production",
                           bundle_id="com.example")


def test_the_kind_comes_from_the_call(jws_ca):
    # Apple's verifier decodes what the call names: a payload whose members say renewal
    # info is no transaction; one whose members say nothing is judged as the call says
    # (Apple's minimal renewal info has no bundleId, so as a transaction it names no app).
    import mint_jws
    root, chains = jws_ca
    ours = SignedDataVerifier([root.read_bytes()], False, "Sandbox", "com.example.minted")
    renewal = mint_jws.sign(mint_jws.example_payload("renewal_info"), chains)
    assert ours.verify_and_decode_renewal_info(renewal).autoRenewStatus == 1
    with pytest.raises(VerificationException) as caught:
        ours.verify_and_decode_signed_transaction(renewal)
    assert (caught.value.status, caught.value.receipt_status) == (VerificationStatus.VERIFICATION_FAILURE,
                                                                  "RECEIPT_E_WRONG_PAYLOAD_KIND")
    assert outcome("signed_transaction", token_of("renewalInfo"), "Sandbox", "com.example", 1234)[0] == \
        VerificationStatus.INVALID_APP_IDENTIFIER


def test_a_minimal_renewal_info_is_judged_as_the_call_says():
    # Apple's renewalInfo holds only environment and signedDate: no member says what it is.
    from appstoreserverlibrary.models.Environment import Environment
    from appstoreserverlibrary.models.JWSRenewalInfoDecodedPayload import JWSRenewalInfoDecodedPayload
    renewal = verifier("Sandbox", "com.example", 1234).verify_and_decode_renewal_info(token_of("renewalInfo"))
    assert type(renewal) is JWSRenewalInfoDecodedPayload  # Apple's own model class
    assert renewal.environment is Environment.SANDBOX and renewal.rawEnvironment == "Sandbox"
    assert renewal.signedDate == 1672956154000
    assert renewal.autoRenewStatus is None  # absent members are None, as in Apple's models


KINDS = {"signedTransaction.json": "transaction", "signedTransactionWithRevocation.json": "transaction",
         "signedRenewalInfo.json": "renewal_info", "signedNotification.json": "notification",
         "signedSummaryNotification.json": "notification", "signedConsumptionRequestNotification.json": "notification",
         "signedRescindConsentNotification.json": "notification",
         "signedExternalPurchaseTokenNotification.json": "notification",
         "signedExternalPurchaseTokenSandboxNotification.json": "notification",
         "appTransaction.json": "app_transaction", "decodedRealtimeRequest.json": "realtime_request"}


@pytest.mark.parametrize("model", sorted(KINDS))
def test_apples_2026_payload_samples_decode_as_their_kind(jws_ca, model):
    # Apple's own samples of every signed payload (2026 members included: advancedCommerceInfo,
    # revocationType and revocationPercentage, appData, externalPurchaseToken), signed here with
    # the project's test CA: each decodes as its kind, every documented member of its type.
    import json
    import mint_jws
    import libreceipt
    _, chains = jws_ca
    payload = json.loads((RESOURCES / "models" / model).read_text())
    decoded = libreceipt.decode_jws_unverified(mint_jws.sign(payload, chains))
    assert decoded.type == KINDS[model]
    assert decoded.payload == payload


@pytest.mark.parametrize("model, environment", [("signedExternalPurchaseTokenNotification.json", "production"),
                                                ("signedExternalPurchaseTokenSandboxNotification.json", "sandbox")])
def test_apples_external_purchase_token_samples_take_their_environment_from_the_id(jws_ca, model, environment):
    import json
    import mint_jws
    import libreceipt
    root, chains = jws_ca
    payload = json.loads((RESOURCES / "models" / model).read_text())
    token = mint_jws.sign(payload, chains)
    app = payload["externalPurchaseToken"]["appAppleId"]
    verifier = libreceipt.Verifier(apple_root=False, anchors=[root.read_bytes()], environment=environment,
                                   app_apple_id=app, now=payload["signedDate"])
    assert verifier.verify_jws(token).step("environment").outcome == "passed"
