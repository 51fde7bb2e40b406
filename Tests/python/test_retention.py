"""Retention Messaging's realtime endpoint of `receipt serve --retention-rules`: Apple's signed
realtime requests (minted with the module's own CA by tools/mint_jws.py) verified as realtime
requests, answered from the rules file by product and locale, promotional offers signed with the
in-app purchase key, and everything else refused by name."""
import base64
import json
import subprocess
import time
import uuid

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from test_notifications import mint_jws, news_ca  # noqa: F401 (fixtures)
from test_serve import CLI, Server

APP_APPLE_ID = 1234567890
MESSAGE, ALTERNATE, OFFER, FRENCH = (str(uuid.UUID(int=n)) for n in (1, 2, 3, 4))
RULES = {
    "default": {"message": {"messageIdentifier": MESSAGE}},
    "rules": [
        {"productId": "com.example.minted.monthly", "alternateProduct": {
            "messageIdentifier": ALTERNATE, "productId": "com.example.minted.yearly"}},
        {"productId": "com.example.minted.monthly", "locale": "fr", "promotionalOffer": {
            "messageIdentifier": OFFER, "offerIdentifier": "win-back-50"}},
        {"locale": "fr-FR", "message": {"messageIdentifier": FRENCH}},
    ],
}
KEY_ID, ISSUER_ID = "KEY123ABCD", "57246542-96fe-1a63-e053-0824d011072a"


@pytest.fixture(scope="module")
def offer_key(tmp_path_factory):
    key = ec.generate_private_key(ec.SECP256R1())
    path = tmp_path_factory.mktemp("offer-key") / "key.p8"
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    return path, key.public_key()


def realtime_server(tmp_path, news_ca, offer_key, rules=RULES, environment="sandbox", *flags):
    (tmp_path / "rules.json").write_text(json.dumps(rules))
    return Server("--anchor", news_ca[0] / "root.pem", "--no-apple-root", "--bundle-id", "com.example.minted",
                  "--environment", environment, "--app-apple-id", str(APP_APPLE_ID),
                  "--retention-rules", tmp_path / "rules.json", "--api-private-key-file", offer_key[0],
                  "--api-key-id", KEY_ID, "--api-issuer-id", ISSUER_ID, *flags)


def realtime_request(mint_jws, news_ca, variant=None, **changes):
    payload = dict({"originalTransactionId": "2000000000000001", "appAppleId": APP_APPLE_ID,
                    "productId": "com.example.minted.monthly", "userLocale": "en-US",
                    "requestIdentifier": str(uuid.uuid4()), "signedDate": int(time.time() * 1000),
                    "environment": "Sandbox"}, **changes)
    return json.dumps({"signedPayload": mint_jws.sign(payload, news_ca[1], variant)})


def ask(server, body, path="/retention/realtime"):
    status, data, _ = server.request("POST", path, body, headers={"Content-Type": "application/json"})
    return status, json.loads(data)


def claims_of(token):
    part = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def test_each_request_gets_the_most_specific_rule(tmp_path, news_ca, offer_key, mint_jws):
    server = realtime_server(tmp_path, news_ca, offer_key)
    try:
        product_only = ask(server, realtime_request(mint_jws, news_ca))
        french_offer = ask(server, realtime_request(mint_jws, news_ca, userLocale="fr-CA"))
        locale_only = ask(server, realtime_request(mint_jws, news_ca, productId="com.example.minted.weekly",
                                                   userLocale="fr_FR"))
        neither = ask(server, realtime_request(mint_jws, news_ca, productId="com.example.minted.weekly"))
    finally:
        server.stop()
    assert product_only == (200, {"alternateProduct": {"messageIdentifier": ALTERNATE,
                                                       "productId": "com.example.minted.yearly"}})
    assert locale_only == (200, {"message": {"messageIdentifier": FRENCH}})
    assert neither == (200, {"message": {"messageIdentifier": MESSAGE}})
    status, answer = french_offer
    assert status == 200 and answer["promotionalOffer"]["messageIdentifier"] == OFFER, answer
    token = answer["promotionalOffer"]["promotionalOfferSignatureV2"]
    # Signed with the in-app purchase key, for this customer and product, as StoreKit expects.
    head, body, signature = token.split(".")
    raw = base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4))
    offer_key[1].verify(encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")),
                        f"{head}.{body}".encode(), ec.ECDSA(hashes.SHA256()))
    claims = claims_of(token)
    assert (claims["aud"], claims["productId"], claims["offerIdentifier"], claims["transactionId"], claims["bid"]) == (
        "promotional-offer", "com.example.minted.monthly", "win-back-50", "2000000000000001", "com.example.minted")


@pytest.mark.parametrize("variant, changes, status_name", [
    ("other-root", {}, "RECEIPT_E_CHAIN_UNTRUSTED"),
    ("payload-changed", {}, "RECEIPT_E_SIGNATURE_INVALID"),
    (None, {"environment": "Production"}, "RECEIPT_E_ENVIRONMENT_MISMATCH"),  # at a sandbox server
])
def test_a_request_that_does_not_verify_is_refused_by_name(tmp_path, news_ca, offer_key, mint_jws, variant, changes,
                                                          status_name):
    server = realtime_server(tmp_path, news_ca, offer_key)
    try:
        status, answer = ask(server, realtime_request(mint_jws, news_ca, variant, **changes))
    finally:
        server.stop()
    assert status == 400 and "promotionalOffer" not in answer, answer
    assert answer["status"] == status_name, answer


def test_another_app_and_another_kind_are_refused(tmp_path, news_ca, offer_key, mint_jws):
    server = realtime_server(tmp_path, news_ca, offer_key, RULES, "production")
    try:
        other_app = ask(server, realtime_request(mint_jws, news_ca, environment="Production", appAppleId=42))
        sandbox = ask(server, realtime_request(mint_jws, news_ca))
        transaction = ask(server, json.dumps({"signedPayload": mint_jws.sign(mint_jws.example_payload(), news_ca[1])}))
        production = ask(server, realtime_request(mint_jws, news_ca, environment="Production"))
        not_post = server.request("GET", "/retention/realtime")[0]
    finally:
        server.stop()
    assert other_app[0] == 400 and other_app[1]["status"] == "RECEIPT_E_APP_APPLE_ID_MISMATCH", other_app
    assert sandbox[0] == 400 and sandbox[1]["status"] == "RECEIPT_E_ENVIRONMENT_MISMATCH", sandbox
    assert transaction[0] == 400 and transaction[1]["status"] == "RECEIPT_E_WRONG_PAYLOAD_KIND", transaction
    assert production[0] == 200 and "alternateProduct" in production[1], production
    assert not_post == 405


@pytest.mark.parametrize("rules, says", [
    ({"rules": [{"productId": "p"}]}, "rules[0] must hold exactly one of message"),
    ({"default": {"message": {"messageIdentifier": "not-a-uuid"}}}, "default.message.messageIdentifier must be a UUID"),
    ({"rules": [{"locale": "fr FR", "message": {"messageIdentifier": MESSAGE}}]}, "rules[0].locale"),
    ({"default": {"message": {"messageIdentifier": MESSAGE}}, "extra": 1}, "extra is not a member here"),
    ({"rules": [{"message": {"messageIdentifier": MESSAGE}}] * 10_001}, "rules: 1 to 10000 values"),
    ([], "not an object"),
])
def test_a_rules_file_that_is_not_one_is_a_usage_error(tmp_path, rules, says):
    (tmp_path / "rules.json").write_text(json.dumps(rules))
    result = subprocess.run([CLI, "serve", "--retention-rules", str(tmp_path / "rules.json"), "--port", "0"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and says in result.stderr, result.stderr


def test_offers_need_the_in_app_purchase_key(tmp_path):
    (tmp_path / "rules.json").write_text(json.dumps({"default": {"promotionalOffer": {
        "messageIdentifier": OFFER, "offerIdentifier": "win-back-50"}}}))
    result = subprocess.run([CLI, "serve", "--retention-rules", str(tmp_path / "rules.json"), "--port", "0"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "--api-private-key-file" in result.stderr, result.stderr


def test_without_a_matching_rule_or_default_the_answer_is_empty(tmp_path, news_ca, offer_key, mint_jws):
    rules = {"rules": [{"productId": "com.example.minted.yearly", "message": {"messageIdentifier": MESSAGE}}]}
    server = realtime_server(tmp_path, news_ca, offer_key, rules)
    try:
        assert ask(server, realtime_request(mint_jws, news_ca)) == (200, {})
    finally:
        server.stop()
