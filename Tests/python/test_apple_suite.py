"""Apple's own test files (app-store-server-library's source distribution, fetched by `make venv`
into build/apple-tests/) run unchanged against libreceipt's drop-in, on the resources of
../shared/fixtures/apple-library-tests. Apple's module names point at the drop-in and Apple's models
stay Apple's (apple_suite/README.md). Every case must come out as classified here: passing, or
answered otherwise on purpose, for the reason given. A case that changes either way fails this test."""
import os
import pathlib
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import pytest

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
RESOURCES = ROOT.parent / "shared" / "fixtures" / "apple-library-tests"
VERSION = "3.1.2"
APPLE_TESTS = ROOT / "build" / "apple-tests" / VERSION / "tests"

pytestmark = [
    pytest.mark.skipif(not RESOURCES.is_dir(), reason="../shared/fixtures/apple-library-tests is absent"),
    pytest.mark.skipif(not APPLE_TESTS.is_dir(), reason=f"Apple's test files ({VERSION}) were not fetched (make venv)"),
]

# The files that test what the drop-in provides. Not run: test_advanced_commerce_models.py,
# test_retention_messaging.py and test_app_data.py test Apple's models, which the drop-in takes as
# they are; test_x509_verifiction.py tests Apple's internal chain verifier class.
FILES = ["test_payload_verification.py", "test_decoded_payloads.py", "test_xcode_signed_data.py",
         "test_receipt_utility.py", "test_jws_signature_creator.py", "test_promotional_offer_signature_creator.py",
         "test_api_client.py", "test_api_client_async.py"]

# Why a case is answered otherwise on purpose.
LOCAL_TESTING = ("Apple's test makes its API client for LOCAL_TESTING, for which Apple's library has a placeholder host "
                 "(https://local-testing-base-url), and answers by replacing the client's internal _execute_request; "
                 "libreceipt's client has no host for local testing (base_url= is required) and sends through its "
                 "transport (transport=), so the case stops where the client is made. Past that, each case checks "
                 "that the request names Apple's library as its User-Agent (app-store-server-library/python), "
                 "which libreceipt does not claim to be. Apple's placeholder key id 'keyId' and issuer id "
                 "'issuerId' are taken (#58 item 4)")
TRANSACTION_ID = ("Apple's test signs an offer for transaction id 'transactionId'; libreceipt refuses before signing a "
                  "transaction id that is not 1 to 20 digits, which no App Store transaction has")
IN_APP_REQUEST = ("Apple's test signs a request class of its own (test_value); libreceipt signs only Apple's Advanced "
                  "Commerce in-app requests, checked as Apple's models check them (operation, version, requestInfo)")
NO_KEY_USAGE = ("the token's leaf (serial 11 of Apple's test CA) has no keyUsage; libreceipt requires digitalSignature "
                "on the signer (hardening 3), which every Apple and Xcode signer carries")
NESTED = ("the notification's nested signed member is Apple's placeholder text ('signed_transaction_info_value'); "
          "libreceipt verifies a notification's nested JWS too (RECEIPT_E_NESTED_UNREADABLE)")
XCODE = ("the token is signed by the StoreKit Testing certificate of the Mac that made it; libreceipt verifies an "
         "Xcode-signed JWS only against the certificate Xcode exports, passed as an anchor, where Apple's verifier "
         "skips verification in the Xcode environment")
REPLACED_INTERNALS = ("Apple's test replaces its verifier's internal _verify_notification; libreceipt's verifier checks "
                      "the token's environment (production, from its externalPurchaseId) against its own (local testing)")

# Apple's test class (file.Class) or case (file.Class.test) -> the reason it is answered otherwise.
DELIBERATE = {
    **{f"test_payload_verification.PayloadVerification.{case}": NO_KEY_USAGE for case in (
        "test_app_store_server_notification_decoding", "test_app_store_server_notification_decoding_production",
        "test_transaction_info_decoding", "test_wrong_app_apple_id_for_server_notification",
        "test_wrong_bundle_id_for_server_notification")},
    **{f"test_decoded_payloads.DecodedPayloads.{case}": NESTED for case in (
        "test_consumption_request_notification_decoding", "test_notification_decoding",
        "test_rescind_consent_notification_decoding")},
    "test_decoded_payloads.DecodedPayloads.test_external_purchase_token_notification_decoding": REPLACED_INTERNALS,
    "test_decoded_payloads.DecodedPayloads.test_external_purchase_token_sandbox_notification_decoding":
        REPLACED_INTERNALS,
    **{f"test_xcode_signed_data.ReceiptUtilityTest.{case}": XCODE for case in (
        "test_xcode_signed_app_transaction", "test_xcode_signed_renewal_info", "test_xcode_signed_transaction")},
    "test_api_client.DecodedPayloads": LOCAL_TESTING,
    "test_api_client_async.DecodedPayloads": LOCAL_TESTING,
    **{f"test_jws_signature_creator.JWSSignatureCreatorTest.{case}": TRANSACTION_ID for case in (
        "test_introductory_offer_eligibility_signature_creator", "test_promotional_offer_signature_creator")},
    "test_jws_signature_creator.JWSSignatureCreatorTest.test_advanced_commerce_api_in_app_signature_creator":
        IN_APP_REQUEST,
}

# Cases of a class listed above that are answered as Apple answers them (they make no client for local testing).
ALIKE = {f"{module}.DecodedPayloads.{case}" for module in ("test_api_client", "test_api_client_async")
         for case in ("test_xcode_not_supported_error",)}


def reason_for(case):
    """The reason `case` (file.Class.test) is answered otherwise, or None when it must pass."""
    if case in ALIKE:
        return None
    parts = case.split(".")
    for length in range(len(parts), 0, -1):
        reason = DELIBERATE.get(".".join(parts[:length]))
        if reason:
            return reason
    return None


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    """{file.Class.test: (outcome, message)} of one run of Apple's files."""
    run = tmp_path_factory.mktemp("apple-suite")
    tests = run / "tests"
    tests.mkdir()
    (tests / "__init__.py").write_text("")
    for name in FILES:
        shutil.copy(APPLE_TESTS / name, tests / name)
    shutil.copy(HERE / "apple_suite" / "util.py", tests / "util.py")
    shutil.copy(HERE / "apple_suite" / "aliases.py", run / "conftest.py")
    (tests / "resources").symlink_to(RESOURCES)
    # Apple's payloads were signed in October 2023 and libreceipt judges a chain at the time of
    # signing: the test CA is made as of 2023-01-01, so that its leaf was valid then.
    subprocess.run([sys.executable, "-c", "import datetime, sys, mint_jws; "
                    "mint_jws.NOW = datetime.datetime(2023, 1, 1, tzinfo=datetime.timezone.utc); "
                    "mint_jws.create_ca(sys.argv[1])", str(run / "ca")],
                   check=True, capture_output=True, env=dict(os.environ, PYTHONPATH=str(ROOT / "tools")))
    environment = dict(os.environ, APPLE_SUITE_CA=str(run / "ca"),
                       PYTHONPATH=os.pathsep.join([str(run), str(ROOT / "bindings" / "python"), str(ROOT / "tools")]))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--continue-on-collection-errors", f"--junitxml={run / 'results.xml'}",
                           *[f"tests/{name}" for name in FILES]], cwd=run, env=environment, capture_output=True,
                          text=True, timeout=600)
    assert (run / "results.xml").exists(), done.stdout + done.stderr
    found = {}
    for case in ElementTree.parse(run / "results.xml").iter("testcase"):
        # A file that does not import is one case named after its module.
        name = ".".join(part for part in (case.get("classname"), case.get("name")) if part).removeprefix("tests.")
        failure = next(iter(list(case)), None)
        outcome = "passed" if failure is None else failure.tag  # failure, error or skipped
        found[name] = (outcome, (failure.get("message") or "")[:300] if failure is not None else "")
    return found


def test_apples_cases_come_out_as_classified(outcomes):
    unexpected = []
    for case, (outcome, message) in sorted(outcomes.items()):
        expected = "passed" if reason_for(case) is None else "not passed"
        actual = "passed" if outcome == "passed" else "not passed"
        if expected != actual:
            unexpected.append(f"{case}: {outcome} {message}")
    assert not unexpected, "\n".join(unexpected)


def test_the_local_testing_cases_stop_where_the_client_is_made(outcomes):
    """LOCAL_TESTING cases must fail where libreceipt asks for a base URL, not anywhere else (not on Apple's
    placeholder ids, which the drop-in takes)."""
    for case, (outcome, message) in outcomes.items():
        if reason_for(case) == LOCAL_TESTING:
            assert "local-testing environment" in message and "base" in message, f"{case}: {message}"


def test_the_count_of_apples_cases_answered_alike(outcomes):
    passed = [case for case, (outcome, _) in outcomes.items() if outcome == "passed"]
    # README's figures (its migration section), kept true by this test.
    assert (len(passed), len(outcomes)) == (24, 130)
    reasons = [reason_for(case) for case in outcomes if case not in passed]
    assert [reasons.count(reason) for reason in (LOCAL_TESTING, NO_KEY_USAGE, NESTED, XCODE, REPLACED_INTERNALS,
                                                 TRANSACTION_ID, IN_APP_REQUEST)] == [90, 5, 3, 3, 2, 2, 1]
    assert len(set(DELIBERATE.values())) <= 10  # the bound on deliberate differences (#58)
    print(f"\nApple's suite {VERSION}: {len(passed)} of {len(outcomes)} cases answered as Apple answers; "
          f"{len(outcomes) - len(passed)} otherwise on purpose")
    assert {case.split(".")[0] for case in passed} >= {"test_payload_verification", "test_decoded_payloads",
                                                      "test_receipt_utility", "test_jws_signature_creator",
                                                      "test_promotional_offer_signature_creator", "test_api_client"}
