"""Verification through the binding: minted receipts for every attack, each
failing with its own status, and the real receipts when ../shared is present."""
import datetime
import json
import sys

import pytest

from conftest import ROOT
from libreceipt import Receipt, ReceiptError, Verifier

sys.path.insert(0, str(ROOT / "tools"))
import der_tree  # noqa: E402  (tools/der_tree.py)

DEVICE = bytes.fromhex("a0b1c2d3e4f5")  # the example spec's device identifier


def anchor(test_ca):
    return (test_ca / "root.pem").read_bytes()


def verify(path, test_ca, **policy):
    verifier = Verifier(apple_root=False, anchors=[anchor(test_ca)], **policy)
    return verifier.verify(Receipt.from_file(path))


def test_minted_receipt_verifies_against_its_test_ca(mint, test_ca):
    result = verify(mint("--purchases", "2"), test_ca, bundle_id="com.example.minted", application_version="42",
                    device_id=DEVICE)
    assert result.valid, result.to_json()
    # no VPP expiration_date, no environment required; revocation is never checked for receipts
    assert [s.outcome for s in result.steps] == ["passed"] * 7 + ["skipped", "skipped", "skipped"]
    assert result.steps[-1].name == "revocation"


def test_sha1_form_verifies(mint, test_ca):
    assert verify(mint("--digest", "sha1"), test_ca).valid


@pytest.mark.parametrize("flags", [("--ber",), ("--ber", "--digest", "sha1")])
def test_ber_is_refused_unless_xcode_signed(mint, test_ca, flags):
    """BER is Xcode's form: the same receipt signed by any other key verifies only in DER."""
    result = verify(mint(*flags), test_ca)
    assert result.status_name == "RECEIPT_E_NOT_CANONICAL"
    assert "BER" in result.step("signature").detail
    assert Receipt.from_file(mint(*flags)).bundle_id == "com.example.minted"  # parsing stays lenient


@pytest.mark.parametrize("environment, status", [("sandbox", "RECEIPT_OK"),
                                                 ("production", "RECEIPT_E_ENVIRONMENT_MISMATCH")])
def test_environment_policy(mint, test_ca, environment, status):
    result = verify(mint(), test_ca, environment=environment)  # minted receipts are ProductionSandbox
    assert result.status_name == status
    assert result.step("environment").status_name == status
    with pytest.raises(ValueError, match="production"):
        Verifier(environment="staging")


def test_naive_datetimes_are_refused():
    with pytest.raises(ValueError, match="aware"):
        Verifier(now=datetime.datetime(2024, 1, 1))
    with pytest.raises(TypeError, match="datetime"):
        Verifier(now="2024-01-01")
    Verifier(now=datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=9))))


def test_verify_bytes_gives_the_verdict_of_verify(mint, test_ca):
    path = mint("--purchases", "3")
    for bundle_id in ("com.example.minted", "com.example.other"):
        verifier = Verifier(apple_root=False, anchors=[anchor(test_ca)], bundle_id=bundle_id)
        from_bytes = verifier.verify_bytes(path.read_bytes())
        assert from_bytes.to_json() == verifier.verify(Receipt.from_file(path)).to_json()
        assert from_bytes.valid == (bundle_id == "com.example.minted")
    with pytest.raises(ReceiptError) as raised:
        Verifier().verify_bytes(path.read_bytes()[:100])
    assert 100 <= raised.value.status < 200 and raised.value.detail


def test_der_anchor_works_like_pem(mint, test_ca):
    verifier = Verifier(apple_root=False, anchors=[(test_ca / "root.der").read_bytes()])
    assert verifier.verify(Receipt.from_file(mint())).valid


def test_minted_receipt_is_not_trusted_by_default(mint):
    result = Verifier().verify(Receipt.from_file(mint()))
    assert not result.valid
    assert result.status_name == "RECEIPT_E_CHAIN_UNTRUSTED"
    assert result.step("signature").outcome == "passed"  # signed, just not by anyone trusted


@pytest.mark.parametrize("variant, status, step", [
    ("forged-chain", "RECEIPT_E_CHAIN_UNTRUSTED", "chain"),
    ("leaf-without-marker", "RECEIPT_E_MISSING_LEAF_MARKER", "leaf_marker"),
    ("intermediate-without-marker", "RECEIPT_E_MISSING_INTERMEDIATE_MARKER", "intermediate_marker"),
    ("tampered-payload", "RECEIPT_E_SIGNATURE_INVALID", "signature"),
    ("expired-at-creation", "RECEIPT_E_CHAIN_NOT_VALID_AT_CREATION", "chain"),
    ("not-yet-valid-at-creation", "RECEIPT_E_CHAIN_NOT_VALID_AT_CREATION", "chain"),
    ("extra-certificate", "RECEIPT_E_UNEXPECTED_CERTIFICATES", "chain"),
    ("missing-intermediate", "RECEIPT_E_CHAIN_UNTRUSTED", "chain"),
    ("signer-not-in-bag", "RECEIPT_E_SIGNER_NOT_FOUND", "signature"),
    ("no-signers", "RECEIPT_E_SIGNER_NOT_FOUND", "signature"),
    ("unsupported-digest", "RECEIPT_E_UNSUPPORTED_DIGEST", "signature"),
    # RSA signatures no library makes, each checked by encoding, not parsing (RFC 8017 §8.2.2)
    ("digest-info-without-null", "RECEIPT_E_SIGNATURE_INVALID", "signature"),
    ("sha1-digest-info", "RECEIPT_E_SIGNATURE_INVALID", "signature"),
    ("short-signature", "RECEIPT_E_SIGNATURE_INVALID", "signature"),
    ("signature-plus-modulus", "RECEIPT_E_SIGNATURE_INVALID", "signature"),
])
def test_each_attack_fails_with_its_own_status(mint, test_ca, variant, status, step):
    result = verify(mint("--variant", variant), test_ca, bundle_id="com.example.minted")
    assert not result.valid
    assert result.status_name == status
    assert result.step(step).outcome == "failed"
    assert result.step(step).status_name == status
    assert result.step(step).detail
    assert result.step("bundle_id").outcome == "passed"  # the other checks still report


def test_a_short_rsa_signature_is_named_by_its_length(mint, test_ca):
    detail = verify(mint("--variant", "short-signature"), test_ca).step("signature").detail
    assert "is 255 bytes; its 2048-bit key's are 256" in detail


def test_wrong_bundle_version_and_device(mint, test_ca):
    path = mint()
    assert verify(path, test_ca, bundle_id="com.example.other").status_name == "RECEIPT_E_BUNDLE_MISMATCH"
    assert verify(path, test_ca, application_version="43").status_name == "RECEIPT_E_VERSION_MISMATCH"
    wrong = bytes([DEVICE[0] ^ 1]) + DEVICE[1:]
    assert verify(path, test_ca, device_id=wrong).status_name == "RECEIPT_E_DEVICE_MISMATCH"
    assert verify(path, test_ca, device_id=DEVICE).valid


def test_bundle_is_compared_byte_for_byte(mint, test_ca):
    # "com.example.minted" with a combining sequence would be canonically different bytes.
    result = verify(mint(), test_ca, bundle_id="com.example.minted\u0301")
    assert result.status_name == "RECEIPT_E_BUNDLE_MISMATCH"


def test_vpp_expiration(mint, test_ca, tmp_path):
    spec = tmp_path / "vpp.json"
    spec.write_text(json.dumps({"expiration_date": "2025-01-01T00:00:00Z"}))
    path = mint("--spec", str(spec))
    before = datetime.datetime(2024, 12, 31, tzinfo=datetime.timezone.utc)
    after = datetime.datetime(2025, 1, 1, 0, 0, 1, tzinfo=datetime.timezone.utc)
    assert verify(path, test_ca, now=before).valid
    result = verify(path, test_ca, now=after)
    assert result.status_name == "RECEIPT_E_RECEIPT_EXPIRED"
    # Without `now`, the current time (2026 and later) is past 2025.
    assert verify(path, test_ca).status_name == "RECEIPT_E_RECEIPT_EXPIRED"


def test_bad_anchor_and_bad_arguments_raise(test_ca):
    with pytest.raises(ReceiptError) as caught:
        Verifier(anchors=[b"not a certificate"])
    assert caught.value.name == "RECEIPT_E_BAD_ANCHOR"
    with pytest.raises(ReceiptError) as caught:
        Verifier(device_id=b"")
    assert caught.value.name == "RECEIPT_E_INVALID_ARGUMENT"


def test_report_json(mint, test_ca):
    document = json.loads(verify(mint(), test_ca).to_json())
    assert document["valid"] is True and document["status"] == "RECEIPT_OK"
    assert document["anchor"].startswith("added anchor")
    assert [s["step"] for s in document["steps"]][:2] == ["signature", "chain"]

# ---------------------------------------------------------------- real receipts

APP_STORE = ["arv__hannes_mac_mindnode_receipt.der", "arv__mindnode_mac_sha256_receipt.der", "cbrv__sandboxReceipt.der",
             "kvitto__receipt.der", "rc__receiptsample1.der", "tp__freshReceipt.der", "tp__receipt-production.der",
             "tp__receipt-sandbox-legacy.der"]
XCODE = ["asl__xcode-app-receipt-empty.der", "kvitto__storeKitTestReceipt.der", "tp__receipt-xcode-with-purchases.der",
         "tp__receipt-xcode.der"]


@pytest.mark.parametrize("name", APP_STORE)
def test_real_app_store_receipts_verify_by_default_and_not_under_xcode(shared, name):
    receipt = Receipt.from_file(shared / "receipts" / name)
    result = Verifier(bundle_id=receipt.bundle_id, application_version=receipt.application_version).verify(receipt)
    assert result.valid, result.to_json()
    assert result.step("leaf_marker").outcome == "passed"
    xcode_only = Verifier(apple_root=False, allow_xcode=True).verify(receipt)
    assert xcode_only.status_name == "RECEIPT_E_CHAIN_UNTRUSTED"


@pytest.mark.parametrize("name", XCODE)
def test_real_xcode_receipts_verify_only_when_allowed(shared, name):
    receipt = Receipt.from_file(shared / "receipts" / name)
    assert Verifier().verify(receipt).status_name == "RECEIPT_E_CHAIN_UNTRUSTED"
    allowed = Verifier(allow_xcode=True).verify(receipt)
    assert allowed.valid, allowed.to_json()
    assert allowed.step("leaf_marker").outcome == "skipped"


@pytest.mark.parametrize("name, device", [("arv__hannes_mac_mindnode_receipt.der", "6c4008b5945e"),
                                          ("arv__mindnode_mac_sha256_receipt.der", "f8ffc21e9182")])
def test_real_device_hashes(shared, name, device):
    receipt = Receipt.from_file(shared / "receipts" / name)
    assert Verifier(device_id=bytes.fromhex(device)).verify(receipt).valid
    other = bytearray.fromhex(device)
    other[-1] ^= 0x01
    assert Verifier(device_id=bytes(other)).verify(receipt).status_name == "RECEIPT_E_DEVICE_MISMATCH"
    assert Verifier(device_id=bytes(16)).verify(receipt).status_name == "RECEIPT_E_DEVICE_MISMATCH"


def test_real_receipts_fail_when_evaluated_now(shared, mint, test_ca):
    # The chain is evaluated at the creation date: this leaf expired in 2023, so the
    # receipt verifying at all shows that "now" was not used.
    receipt = Receipt.from_file(shared / "receipts" / "arv__hannes_mac_mindnode_receipt.der")
    assert receipt.receipt_creation_date.text == "2017-09-04T09:01:20Z"
    assert Verifier().verify(receipt).valid


def test_shared_verifier_from_python_threads(mint, test_ca):
    import threading
    paths = [mint(), mint("--ber"), mint("--variant", "tampered-payload"), mint("--variant", "leaf-without-marker")]
    receipts = [Receipt.from_file(path) for path in paths]
    verifier = Verifier(apple_root=False, anchors=[anchor(test_ca)])
    serial = [verifier.verify(receipt).status_name for receipt in receipts]
    assert serial == ["RECEIPT_OK", "RECEIPT_E_NOT_CANONICAL", "RECEIPT_E_SIGNATURE_INVALID",
                      "RECEIPT_E_MISSING_LEAF_MARKER"]
    differences = []

    def work():
        for i in range(400):
            index = i % len(receipts)
            status = verifier.verify(receipts[index]).status_name
            if status != serial[index]:
                differences.append((index, status))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert differences == []


def _minted_variants():
    """(name, change) pairs over a minted receipt's DER tree (tools/der_tree.py), each
    leaving the payload and its signature intact: only the unsigned envelope differs."""
    null = (0x05, b"")
    return [
        ("version 99", lambda fields: fields.__setitem__(0, (0x02, b"\x63"))),
        ("no digest algorithms", lambda fields: fields.__setitem__(1, (0x31, []))),
        ("two digest algorithms", lambda fields: fields.__setitem__(1, (0x31, fields[1][1] * 2))),
        ("crls", lambda fields: fields.insert(4, (0xA1, [null]))),
        ("junk after the signature", lambda fields: fields[-1][1][0][1].append(null)),
        ("unsigned attributes", lambda fields: fields[-1][1][0][1].append((0xA1, []))),
    ]


@pytest.mark.parametrize("name, change", _minted_variants(), ids=[name for name, _ in _minted_variants()])
def test_only_the_canonical_envelope_verifies(mint, test_ca, name, change):
    """The same attacks as the Swift suite's on a real receipt, here on a minted one, so that
    they run in a clone without ../shared too."""
    genuine = mint().read_bytes()
    tag, (oid, (explicit, (signed_data,))), _ = der_tree.parse(genuine)
    assert der_tree.encode((tag, [oid, (explicit, [signed_data])])) == genuine
    change(signed_data[1])
    changed = der_tree.encode((tag, [oid, (explicit, [signed_data])]))
    verifier = Verifier(apple_root=False, anchors=[anchor(test_ca)])
    assert verifier.verify_bytes(genuine).valid
    result = verifier.verify_bytes(changed)
    assert result.status_name == "RECEIPT_E_NOT_CANONICAL", (name, result.to_json())
    assert Receipt(changed).bundle_id == "com.example.minted"  # parsing stays lenient


def test_certificate_bags_are_refused_before_decoding(mint, test_ca):
    genuine = mint().read_bytes()
    verifier = Verifier(apple_root=False, anchors=[anchor(test_ca)])
    duplicated = der_tree.with_certificates(genuine, lambda certificates: certificates + [certificates[0]])
    assert verifier.verify_bytes(duplicated).status_name == "RECEIPT_E_DUPLICATE_CERTIFICATE"
    junk = [(0x30, [(0x02, bytes([n]))]) for n in range(9)]  # not even certificates: only counted
    padded = der_tree.with_certificates(genuine, lambda certificates: certificates + junk)
    assert verifier.verify_bytes(padded).status_name == "RECEIPT_E_TOO_MANY_CERTIFICATES"
    assert verifier.verify_bytes(genuine).valid
