"""StoreKit 2 JWS: real Apple-signed and Xcode-signed samples, minted ones, and every attack variant
of tools/mint_jws.py, through Python and the CLI."""
import base64
import json
import os
import subprocess
import sys

import pytest

import libreceipt
from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import mint_jws  # noqa: E402  (tools/mint_jws.py)

CLI = os.environ.get("RECEIPT_CLI")
needs_cli = pytest.mark.skipif(not CLI, reason="RECEIPT_CLI is not set (run through `make test`)")


def expected_rows(shared_jws):
    return [json.loads(line) for line in (shared_jws / "expected.jsonl").read_text().splitlines() if line]


def path_of(shared_jws, row):
    folder = "xcode" if row["x5c"] == 1 else "apple"
    return shared_jws / folder / row["file"]


def cli(*args):
    return subprocess.run([CLI, *map(str, args)], capture_output=True)


# ---------------------------------------------------------------- real samples

def test_every_apple_jws_decodes_to_its_expected_payload(shared_jws):
    rows = expected_rows(shared_jws)
    assert len(rows) == 25
    for row in rows:
        token = path_of(shared_jws, row).read_text()
        if row["payload"] is None:
            with pytest.raises(libreceipt.ReceiptError) as caught:
                libreceipt.decode_jws_unverified(token)
            assert caught.value.name == "RECEIPT_E_NOT_AN_OBJECT"
            continue
        jws = libreceipt.decode_jws_unverified(token)
        assert jws.payload == row["payload"], row["file"]
        assert jws.header["alg"] == row["alg"] and len(jws.header["x5c"]) == row["x5c"]
        assert jws.signed_date == int(row["signed_ms"] // 1), row["file"]


def test_every_apple_jws_verifies_at_its_signed_date_in_sandbox_with_its_bundle_id(shared_jws):
    for row in expected_rows(shared_jws):
        if row["x5c"] != 3 or row["payload"] is None:
            continue
        token = path_of(shared_jws, row).read_text()
        payload = row["payload"]
        bundle = payload.get("bundleId") or payload.get("data", {}).get("bundleId")
        result = libreceipt.Verifier(bundle_id=bundle, environment="sandbox").verify_jws(token)
        assert result.valid, (row["file"], result.to_json())
        assert result.payload == payload
        assert result.step("chain").outcome == "passed" and result.step("signature").outcome == "passed"
        assert result.step("bundle_id").outcome == ("skipped" if bundle is None else "passed")
        production = libreceipt.Verifier(environment="production").verify_jws(token)
        assert not production.valid and production.status_name == "RECEIPT_E_ENVIRONMENT_MISMATCH"
        other = libreceipt.Verifier(bundle_id="com.example.other").verify_jws(token)
        if bundle is None:  # a renewal info names no app: the step is skipped, not failed
            assert other.step("bundle_id").outcome == "skipped" and other.valid
        else:
            assert other.status_name == "RECEIPT_E_BUNDLE_MISMATCH"


def test_notifications_verify_their_nested_jws(shared_jws):
    token = (shared_jws / "apple" / "spb__01_notification_DID_RENEW.jws").read_text()
    result = libreceipt.Verifier().verify_jws(token)
    assert result.step("nested").outcome == "passed"
    assert "data.signedTransactionInfo" in result.step("nested").detail


def test_expired_leaves_verify_at_signing_not_now(shared_jws):
    for name in ("spb__46_notification_TEST.jws", "hound__01_transaction.jws"):
        result = libreceipt.Verifier().verify_jws((shared_jws / "apple" / name).read_text())
        assert result.valid, result.to_json()


def test_xcode_jws_needs_its_certificate_as_anchor(shared_jws):
    certificate = (shared_jws / "certs" / "StoreKitTestingInXcode-2023-10-19.pem").read_bytes()
    for path in sorted((shared_jws / "xcode").glob("*.jws")):
        token = path.read_text()
        refused = libreceipt.Verifier().verify_jws(token)
        assert refused.status_name == "RECEIPT_E_CHAIN_UNTRUSTED"
        assert refused.step("signature").outcome == "passed"  # checked, never skipped
        accepted = libreceipt.Verifier(anchors=[certificate], environment="xcode").verify_jws(token)
        assert accepted.valid, accepted.to_json()
        assert accepted.step("leaf_marker").outcome == "skipped"


def test_xcode_dates_keep_fractions_and_year_one(shared_jws):
    app = libreceipt.decode_jws_unverified(
        (shared_jws / "xcode" / "asl-swift__xcode-signed-app-transaction.jws").read_text())
    assert app.type == "app_transaction"
    assert app.payload["originalPurchaseDate"] == -62135769600000
    assert app.signed_date == 1697680122257  # receiptCreationDate 1697680122257.447, cut


@needs_cli
def test_cli_exit_codes_on_real_jws(shared_jws):
    for row in expected_rows(shared_jws):
        path = path_of(shared_jws, row)
        if row["payload"] is None:
            result = cli("verify", "--environment", "sandbox", path)
            assert result.returncode == 2 and b"RECEIPT_E_NOT_AN_OBJECT" in result.stderr
            continue
        inspected = cli("inspect", path)
        assert inspected.returncode == 0, inspected.stderr
        document = json.loads(inspected.stdout)
        assert document["format"] == "jws" and document["payload"] == row["payload"]
        assert document["header"]["alg"] == "ES256"
        if row["x5c"] == 1:
            assert cli("verify", path).returncode == 1
            anchor = shared_jws / "certs" / "StoreKitTestingInXcode-2023-10-19.pem"
            assert cli("verify", "--anchor", anchor, path).returncode == 0
            continue
        assert cli("verify", "--environment", "sandbox", path).returncode == 0
        assert cli("verify", "--environment", "production", path).returncode == 1
        verdict = json.loads(cli("verify", "--json", "--bundle-id", "com.example.other", path).stdout)
        assert verdict["valid"] == (row["payload"].get("bundleId") is None
                                    and "data" not in row["payload"])


# ---------------------------------------------------------------- minted

def anchored(root, **policy):
    return libreceipt.Verifier(apple_root=False, anchors=[root.read_bytes()], **policy)


def test_minted_jws_verifies_against_the_test_root_only(jws_ca):
    root, chains = jws_ca
    token = mint_jws.sign(mint_jws.example_payload(), chains)
    result = anchored(root, bundle_id="com.example.minted", environment="sandbox").verify_jws(token)
    assert result.valid, result.to_json()
    assert [step.name for step in result.steps] == ["header", "signature", "chain", "intermediate_marker",
                                                    "leaf_marker", "bundle_id", "application_version",
                                                    "environment", "app_apple_id", "nested", "revocation"]
    assert libreceipt.Verifier().verify_jws(token).status_name == "RECEIPT_E_CHAIN_UNTRUSTED"


@pytest.mark.parametrize("variant", sorted(mint_jws.VARIANTS))
def test_every_attack_variant_is_refused_with_its_status(jws_ca, variant):
    root, chains = jws_ca
    token = mint_jws.sign(mint_jws.example_payload(), chains, variant)
    expected = mint_jws.VARIANTS[variant]
    if variant in mint_jws.UNREADABLE:
        with pytest.raises(libreceipt.ReceiptError) as caught:
            anchored(root).verify_jws(token)
        assert caught.value.name == expected
        return
    result = anchored(root).verify_jws(token)
    assert not result.valid
    assert result.status_name == expected, result.to_json()


@needs_cli
@pytest.mark.parametrize("variant", sorted(mint_jws.VARIANTS))
def test_cli_refuses_every_attack_variant(jws_ca, variant, tmp_path):
    root, chains = jws_ca
    path = tmp_path / "attack.jws"
    path.write_text(mint_jws.sign(mint_jws.example_payload(), chains, variant))
    result = cli("verify", "--json", "--no-apple-root", "--anchor", root, path)
    if variant in mint_jws.UNREADABLE:
        assert result.returncode == 2 and mint_jws.VARIANTS[variant].encode() in result.stderr
    else:
        assert result.returncode == 1
        assert json.loads(result.stdout)["status"] == mint_jws.VARIANTS[variant]


def test_signed_date_absent_is_judged_at_a_given_time_only(jws_ca):
    root, chains = jws_ca
    token = mint_jws.sign(mint_jws.example_payload(), chains, "no-signed-date")
    assert anchored(root).verify_jws(token).status_name == "RECEIPT_E_NO_CREATION_DATE"
    given = anchored(root, now=int(mint_jws.NOW.timestamp() * 1000)).verify_jws(token)
    assert given.valid, given.to_json()


def test_nested_transaction_is_verified_with_the_same_verifier(jws_ca):
    root, chains = jws_ca
    nested = mint_jws.sign(mint_jws.example_payload(), chains)
    notification = mint_jws.example_payload("notification")
    notification["data"]["signedTransactionInfo"] = nested
    good = anchored(root, bundle_id="com.example.minted").verify_jws(mint_jws.sign(notification, chains))
    assert good.valid and good.step("nested").outcome == "passed", good.to_json()
    notification["data"]["signedTransactionInfo"] = mint_jws.sign(mint_jws.example_payload(), chains,
                                                                  "payload-changed")
    bad = anchored(root).verify_jws(mint_jws.sign(notification, chains))
    assert bad.step("nested").outcome == "failed"
    assert bad.step("nested").status_name == "RECEIPT_E_SIGNATURE_INVALID"
    assert bad.step("signature").outcome == "passed"


def test_app_apple_id_is_required_in_production(jws_ca):
    root, chains = jws_ca
    notification = mint_jws.example_payload("notification")
    notification["data"]["environment"] = "Production"
    token = mint_jws.sign(notification, chains)
    assert anchored(root).verify_jws(token).status_name == "RECEIPT_E_APP_APPLE_ID_MISMATCH"
    assert anchored(root, app_apple_id=1234567890).verify_jws(token).valid
    assert anchored(root, app_apple_id=1).verify_jws(token).status_name == "RECEIPT_E_APP_APPLE_ID_MISMATCH"


def realtime_request(environment="Sandbox", app_apple_id=1234567890):
    """Retention Messaging's DecodedRealtimeRequestBody, as Apple documents it."""
    return {"originalTransactionId": "2000000000000001", "appAppleId": app_apple_id,
            "productId": "com.example.minted.monthly", "userLocale": "en-US",
            "requestIdentifier": "3db5c98d-8acf-4e29-831e-8e1f82f9f6e9",
            "signedDate": int(mint_jws.NOW.timestamp() * 1000), "environment": environment}


def test_a_realtime_request_is_its_own_kind_with_environment_and_app_checks(jws_ca):
    root, chains = jws_ca
    token = mint_jws.sign(realtime_request(), chains)
    assert libreceipt.decode_jws_unverified(token).type == "realtime_request"
    result = anchored(root, environment="sandbox", bundle_id="com.example.minted").verify_jws(token)
    assert result.valid, result.to_json()
    assert result.step("environment").outcome == "passed"
    assert result.step("bundle_id").outcome == "skipped"  # a realtime request names its app by Apple id only
    assert anchored(root, environment="production").verify_jws(token).status_name == "RECEIPT_E_ENVIRONMENT_MISMATCH"
    production = mint_jws.sign(realtime_request("Production"), chains)
    assert anchored(root, environment="production", app_apple_id=1234567890).verify_jws(production).valid
    assert anchored(root, environment="production", app_apple_id=1).verify_jws(production).status_name == \
        "RECEIPT_E_APP_APPLE_ID_MISMATCH"


@pytest.mark.parametrize("purchase_id, environment", [("SANDBOX_b9fc7c9b-8b3a-4d6d-9d7d-0f2f1c1e5a11", "sandbox"),
                                                      ("b9fc7c9b-8b3a-4d6d-9d7d-0f2f1c1e5a11", "production")])
def test_an_external_purchase_token_takes_its_environment_from_the_token(jws_ca, purchase_id, environment):
    # Apple's rule: an EXTERNAL_PURCHASE_TOKEN notification names no environment; an
    # externalPurchaseId starting with SANDBOX is the sandbox's, any other production's.
    root, chains = jws_ca
    signed = int(mint_jws.NOW.timestamp() * 1000)
    notification = {"notificationType": "EXTERNAL_PURCHASE_TOKEN", "subtype": "UNREPORTED",
                    "notificationUUID": "6f1f4a2e-0000-4000-8000-0000000000e1", "version": "2.0", "signedDate": signed,
                    "externalPurchaseToken": {"externalPurchaseId": purchase_id, "tokenCreationDate": signed,
                                              "appAppleId": 1234567890, "bundleId": "com.example.minted"}}
    token = mint_jws.sign(notification, chains)
    other = "production" if environment == "sandbox" else "sandbox"
    right = anchored(root, environment=environment, app_apple_id=1234567890, bundle_id="com.example.minted")
    assert right.verify_jws(token).valid, right.verify_jws(token).to_json()
    wrong = anchored(root, environment=other, app_apple_id=1234567890).verify_jws(token)
    assert wrong.status_name == "RECEIPT_E_ENVIRONMENT_MISMATCH" and "externalPurchaseId" in wrong.step("environment").detail


def test_renewal_info_skips_the_bundle_step(jws_ca):
    root, chains = jws_ca
    token = mint_jws.sign(mint_jws.example_payload("renewal_info"), chains)
    result = anchored(root, bundle_id="com.example.other").verify_jws(token)
    assert result.valid and result.step("bundle_id").outcome == "skipped"


def test_unknown_members_and_enum_values_are_kept(jws_ca):
    root, chains = jws_ca
    payload = dict(mint_jws.example_payload(), inAppOwnershipType="SOMETHING_NEW", offerType=99, futureField=[1])
    result = anchored(root).verify_jws(mint_jws.sign(payload, chains))
    assert result.valid and result.payload["futureField"] == [1] and result.payload["offerType"] == 99


def test_documented_member_of_the_wrong_type_is_refused(jws_ca):
    _, chains = jws_ca
    payload = dict(mint_jws.example_payload(), signedDate="yesterday")
    with pytest.raises(libreceipt.ReceiptError) as caught:
        libreceipt.decode_jws_unverified(mint_jws.sign(payload, chains))
    assert caught.value.name == "RECEIPT_E_BAD_FIELD" and "signedDate" in caught.value.detail


def test_payload_is_exactly_as_signed(jws_ca):
    _, chains = jws_ca
    text = '{ "transactionId" : "1", "bundleId":"com.example.minted", "extra": 1.50e3, "signedDate": 1 }'
    jws = libreceipt.decode_jws_unverified(mint_jws.sign(json.loads(text), chains, payload_text=text))
    assert jws.payload_json == text


@pytest.mark.parametrize("token, status", [
    ("", "RECEIPT_E_EMPTY_INPUT"), ("abc", "RECEIPT_E_NOT_A_JWS"), ("a.b.c.d", "RECEIPT_E_NOT_A_JWS"),
    (".e30.", "RECEIPT_E_NOT_A_JWS"), ("e30.e30.!", "RECEIPT_E_BAD_BASE64URL"), ("e30.e.x", "RECEIPT_E_BAD_BASE64URL"),
    ("e30.eyJhIjoxLCJhIjoyfQ.", "RECEIPT_E_DUPLICATE_MEMBER"),
    ("e30." + mint_jws.b64url(b'{"a":"\xff"}') + ".", "RECEIPT_E_BAD_UTF8"),
    ("e30." + mint_jws.b64url(b"[[1]]") + ".", "RECEIPT_E_NOT_AN_OBJECT"),
    ("e30." + mint_jws.b64url(b'{"a":' + b"[" * 17 + b"]" * 17 + b"}") + ".", "RECEIPT_E_NESTING_TOO_DEEP"),
    ("e30." + mint_jws.b64url(b'{"a":[' + b"0," * 10000 + b"0]}") + ".", "RECEIPT_E_LIMIT_EXCEEDED"),
])
def test_unreadable_tokens_get_named_statuses(token, status):
    with pytest.raises(libreceipt.ReceiptError) as caught:
        libreceipt.decode_jws_unverified(token)
    assert caught.value.name == status


def test_wrong_argument_types_raise_type_error():
    with pytest.raises(TypeError):
        libreceipt.decode_jws_unverified(42)
    with pytest.raises(TypeError):
        libreceipt.Verifier(app_apple_id="123")


@needs_cli
def test_bench_json_works_on_jws(jws_ca, tmp_path):
    root, chains = jws_ca
    path = tmp_path / "minted.jws"
    path.write_text(mint_jws.sign(mint_jws.example_payload(), chains))
    result = cli("bench", path, "--json", "--samples", "1", "--anchor", root)
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["format"] == "jws" and figures["type"] == "transaction" and figures["file"] == str(path)
    for key in ("decode", "verify_cold", "verify_warm"):
        assert isinstance(figures[key], int) and figures[key] > 0, key
    assert cli("bench", path, "--json", "--samples", "1").returncode == 1  # not trusted: not timed


# ---------------------------------------------------------------- entitlements

def minted_transaction(chains, transaction_id, purchase_ms, expires_ms, **extra):
    payload = dict(mint_jws.example_payload(), transactionId=transaction_id, originalTransactionId="1000000000",
                   productId="com.example.product.1", purchaseDate=purchase_ms, expiresDate=expires_ms, **extra)
    return mint_jws.sign(payload, chains)


def test_entitlements_from_a_receipt_and_transactions_together(jws_ca, test_ca, minted):
    root, chains = jws_ca
    day = 86_400_000
    march_15 = 1_710_496_800_000  # 2024-03-15T10:00:00Z
    receipt = libreceipt.Receipt.from_file(minted["der"])  # transactions 1000000000-1000000002, from 2024-03-01
    revoked = minted_transaction(chains, "1000000001", march_15 - 13 * day, march_15 + 17 * day,
                                 revocationDate=march_15 - day)
    renewal = minted_transaction(chains, "1000000003", march_15 + 20 * day, march_15 + 50 * day)
    verifier = libreceipt.Verifier(apple_root=False, anchors=[root.read_bytes(), (test_ca / "root.pem").read_bytes()])
    report = libreceipt.entitlements(march_15, [revoked, renewal, revoked], receipt=receipt, verifier=verifier)
    by_id = {p["transaction_id"]: p for p in report["purchases"]}
    assert sorted(by_id) == ["1000000000", "1000000001", "1000000002", "1000000003"]
    assert len(report["purchases"]) == 4  # the receipt's 1000000001 and the repeated token count once
    assert by_id["1000000001"]["source"] == "signed_transaction"
    assert by_id["1000000001"]["inactive_reason"] == "cancelled"
    assert by_id["1000000000"]["source"] == "receipt" and by_id["1000000000"]["active"]
    assert by_id["1000000003"]["inactive_reason"] == "not_yet_started"
    assert report["subscriptions"][0]["periods"] == 4
    later = libreceipt.entitlements(march_15 + 30 * day, [revoked, renewal], receipt=receipt, verifier=verifier)
    assert later["active_product_ids"] == ["com.example.product.1"]
    assert later["subscriptions"][0]["expires_at_ms"] == march_15 + 50 * day


def test_entitlements_refuse_what_did_not_verify(jws_ca):
    root, chains = jws_ca
    good = mint_jws.sign(mint_jws.example_payload(), chains)
    bad = mint_jws.sign(mint_jws.example_payload(), chains, "payload-changed")
    verifier = libreceipt.Verifier(apple_root=False, anchors=[root.read_bytes()])
    at = int(mint_jws.NOW.timestamp() * 1000)
    assert libreceipt.entitlements(at, [good], verifier=verifier)["active_product_ids"] == ["com.example.minted.monthly"]
    with pytest.raises(libreceipt.ReceiptError) as caught:
        libreceipt.entitlements(at, [good, bad], verifier=verifier)
    assert caught.value.name == "RECEIPT_E_SIGNATURE_INVALID"
    # A renewal info only names grace periods: alone it entitles to nothing, and it must verify too.
    renewal = mint_jws.sign(mint_jws.example_payload("renewal_info"), chains)
    assert libreceipt.entitlements(at, [renewal], verifier=verifier)["purchases"] == []
    forged = mint_jws.sign(mint_jws.example_payload("renewal_info"), chains, "payload-changed")
    with pytest.raises(libreceipt.ReceiptError) as caught:
        libreceipt.entitlements(at, [good, forged], verifier=verifier)
    assert caught.value.name == "RECEIPT_E_SIGNATURE_INVALID" and "renewal info 1" in caught.value.detail
    app_transaction = mint_jws.sign({"receiptType": "Sandbox", "bundleId": "com.example.minted", "applicationVersion": "1",
                                     "receiptCreationDate": at, "originalApplicationVersion": "1",
                                     "originalPurchaseDate": at, "signedDate": at}, chains)
    with pytest.raises(libreceipt.ReceiptError) as caught:
        libreceipt.entitlements(at, [app_transaction], verifier=verifier)
    assert caught.value.name == "RECEIPT_E_INVALID_ARGUMENT"
    with pytest.raises(libreceipt.ReceiptError) as caught:
        libreceipt.entitlements(at, [good])  # no verifier and not unverified
    assert caught.value.name == "RECEIPT_E_INVALID_ARGUMENT"
    assert libreceipt.entitlements(at, [bad], unverified=True)["purchases"][0]["source"] == "signed_transaction"


def test_a_billing_grace_period_keeps_the_last_period_active(jws_ca):
    # The story's subscription: the third period ended 5 days ago, its renewal failed into a
    # 16-day grace period (Apple's status 4). Entitled, in the entitlements as in the state.
    root, chains = jws_ca
    story = mint_jws.notification_story()
    transactions = {n["data"]["signedTransactionInfo"]["transactionId"]: n["data"]["signedTransactionInfo"] for _, n in story}
    renewal = story[-1][1]["data"]["signedRenewalInfo"]
    tokens = [mint_jws.sign(t, chains) for t in transactions.values()]
    verifier = libreceipt.Verifier(apple_root=False, anchors=[root.read_bytes()])
    at = int(mint_jws.NOW.timestamp() * 1000)
    lapsed = libreceipt.entitlements(at, tokens, verifier=verifier)
    assert lapsed["active_product_ids"] == [] and not lapsed["subscriptions"][0]["active"]
    granted = libreceipt.entitlements(at, tokens + [mint_jws.sign(renewal, chains)], verifier=verifier)
    assert granted["active_product_ids"] == ["com.example.minted.monthly"]
    assert granted["subscriptions"][0]["active"] and granted["subscriptions"][0]["in_grace_period"]
    assert granted["subscriptions"][0]["expires_at_ms"] == renewal["gracePeriodExpiresDate"]
    assert [p.get("in_grace_period", False) for p in granted["purchases"]].count(True) == 1
    # After the grace period: nothing.
    later = libreceipt.entitlements(renewal["gracePeriodExpiresDate"], tokens + [mint_jws.sign(renewal, chains)],
                                    verifier=verifier)
    assert later["active_product_ids"] == []


def test_offer_types_map_to_trial_and_intro(jws_ca):
    _, chains = jws_ca
    at = int(mint_jws.NOW.timestamp() * 1000)
    trial = mint_jws.sign(dict(mint_jws.example_payload(), offerType=1, offerDiscountType="FREE_TRIAL"), chains)
    report = libreceipt.entitlements(at, [trial], unverified=True)
    assert report["subscriptions"][0]["is_trial_period"] and not report["subscriptions"][0]["is_in_intro_offer_period"]
    intro = mint_jws.sign(dict(mint_jws.example_payload(), offerType=1, offerDiscountType="PAY_AS_YOU_GO"), chains)
    report = libreceipt.entitlements(at, [intro], unverified=True)
    assert report["subscriptions"][0]["is_in_intro_offer_period"] and report["trial_or_intro_offer_used"]


@needs_cli
def test_cli_entitlements_reads_receipts_and_jws(jws_ca, test_ca, minted, tmp_path):
    root, chains = jws_ca
    path = tmp_path / "t.jws"
    path.write_text(minted_transaction(chains, "1000000009", 1_710_496_800_000, 1_710_496_800_000 + 86_400_000))
    result = cli("entitlements", minted["der"], path, "--at", "2024-03-15T12:00:00Z", "--no-apple-root",
                 "--anchor", root, "--anchor", test_ca / "root.pem")
    assert result.returncode == 0, result.stderr
    sources = {p["transaction_id"]: p["source"] for p in json.loads(result.stdout)["purchases"]}
    assert sources["1000000009"] == "signed_transaction" and sources["1000000000"] == "receipt"
    untrusted = cli("entitlements", path, "--at", "2024-03-15T12:00:00Z")
    assert untrusted.returncode == 1 and b"RECEIPT_E_CHAIN_UNTRUSTED" in untrusted.stderr


def test_bad_arguments_are_value_errors_as_apples_library_raises():
    # Code written against Apple's library catches ValueError for bad input.
    with pytest.raises(ValueError):
        libreceipt.decode_jws_unverified("not.a.jws")  # a ReceiptError
    with pytest.raises(ValueError):
        libreceipt.decode_jws_unverified(42)  # the wrong type: a TypeError too
    with pytest.raises(TypeError):
        libreceipt.decode_jws_unverified(42)
    with pytest.raises(ValueError):
        libreceipt.Verifier(app_apple_id="123")
    assert issubclass(libreceipt.ReceiptError, ValueError) and issubclass(libreceipt.ArgumentTypeError, TypeError)


def test_an_x5c_ending_in_a_reissue_of_the_anchor_chains_to_the_anchor():
    # A root renewed with new dates keeps its name and key; Apple's verifier chains the
    # intermediate to the pinned root by signature, whatever copy the token carries.
    import datetime
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    year = datetime.timedelta(days=365)
    root_name = "libreceipt reissued-root test"
    root, root_key, inter, leaf, leaf_key = mint_jws.make_chain(root_name)
    reissue = mint_jws.certificate(root_name, root_name, root_key.public_key(), root_key, mint_jws.NOW - 2 * year,
                                   mint_jws.NOW + 30 * year, True)
    assert reissue.public_bytes(serialization.Encoding.DER) != root.public_bytes(serialization.Encoding.DER)
    verifier = libreceipt.Verifier(apple_root=False, anchors=[mint_jws.pem(root)])
    token = mint_jws.sign(mint_jws.example_payload(), {"good": ([leaf, inter, reissue], leaf_key)})
    result = verifier.verify_jws(token)
    assert result.valid, result.to_json()
    assert "re-issue" in result.step("chain").detail and "same subject and key" in result.step("chain").detail
    # The same name with another key is no re-issue: untrusted.
    other_key = ec.generate_private_key(ec.SECP384R1())
    impostor = mint_jws.certificate(root_name, root_name, other_key.public_key(), other_key, mint_jws.NOW - year,
                                    mint_jws.NOW + year, True)
    forged = mint_jws.sign(mint_jws.example_payload(), {"good": ([leaf, inter, impostor], leaf_key)})
    assert verifier.verify_jws(forged).status_name == "RECEIPT_E_CHAIN_UNTRUSTED"


@needs_cli
@pytest.mark.parametrize("changes, named", [
    # Top-level members only: the earliest in Apple's table, whichever order the payload's are hashed in.
    ({"webOrderLineItemId": 5, "price": "free", "expiresDate": "soon"}, "expiresDate is a string"),
    # A nested member after the top-level one.
    ({"commitmentInfo": {"billingPeriodNumber": "first"}, "type": 1}, "type is a number"),
    # Nested only: the first path under the member that is there.
    ({"commitmentInfo": {"commitmentPrice": "x", "billingPeriodNumber": "y"}}, "commitmentInfo.billingPeriodNumber is a string"),
])
def test_of_several_mistyped_members_the_first_documented_is_named(jws_ca, tmp_path, changes, named):
    """Each member present is checked once against its kind's table; the one refused is the
    first in the table's order, the same in every process (each hashes in its own order)."""
    _, chains = jws_ca
    token = mint_jws.sign(dict(mint_jws.example_payload(), **changes), chains)
    path = tmp_path / "mistyped.jws"
    path.write_text(token)
    for _ in range(4):  # a process each: Swift seeds its hashing afresh in each
        done = cli("inspect", path)
        assert done.returncode != 0 and named in done.stderr.decode(), done.stderr
    with pytest.raises(libreceipt.ReceiptError) as caught:
        libreceipt.decode_jws_unverified(token)
    assert caught.value.name == "RECEIPT_E_BAD_FIELD" and named in caught.value.detail


def decode_payload(token):
    """A compact JWS's payload, unverified (the ids are what is tested here, not the signature)."""
    part = token.strip().split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def test_minted_customers_never_share_an_id(tmp_path, jws_ca):
    """`mint_jws.py notifications` for two customers whose original ids follow each other: the first
    purchase carries the original's id, as Apple's does, and no transaction or line item id of one
    is the other's (each id counted once across both)."""
    ids = {"transactionId": [], "webOrderLineItemId": [], "notificationUUID": []}
    for original in ("2000000000000001", "2000000000000002"):
        directory = tmp_path / original
        subprocess.run([sys.executable, str(ROOT / "tools" / "mint_jws.py"), "notifications", str(directory), "--ca",
                        str(jws_ca[0].parent), "--original-transaction-id", original, "--jws"], check=True,
                       capture_output=True)
        story = [decode_payload((directory / name).read_text()) for name in sorted(os.listdir(directory))]
        assert len(story) == 7, sorted(os.listdir(directory))
        transactions = {}
        for notification in story:
            transaction = decode_payload(notification["data"]["signedTransactionInfo"])
            transactions[transaction["transactionId"]] = transaction
            ids["notificationUUID"].append(notification["notificationUUID"])
        assert min(transactions.values(), key=lambda t: t["purchaseDate"])["transactionId"] == original
        for transaction in transactions.values():
            ids["transactionId"].append(transaction["transactionId"])
            ids["webOrderLineItemId"].append(transaction["webOrderLineItemId"])
    for kind, values in ids.items():
        assert len(values) == len(set(values)) == {"transactionId": 6, "webOrderLineItemId": 6, "notificationUUID": 14}[kind], \
            (kind, values)
