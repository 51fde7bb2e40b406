"""A small notification backend written the way Apple's README and examples write one (#58 item 7):
verify the notification, `isinstance` on the decoded models, `.name` and equality on enumerations,
dates from `signedDate`, the nested transaction and renewal info verified with
`verify_and_decode_signed_transaction` / `verify_and_decode_renewal_info`, state kept in SQLite.
It runs once on Apple's library and once on libreceipt's drop-in, where only the import lines differ,
on the same minted notifications (every notification type and subtype Apple documents, both
environments, and forged ones): the same answers and the same database, byte for byte."""
import datetime
import importlib
import json
import sqlite3
import sys

import pytest

pytest.importorskip("appstoreserverlibrary.signed_data_verifier",
                    reason="Apple's app-store-server-library is not installed (make venv installs it)")

BUNDLE_ID, APP_APPLE_ID = "com.example.minted", 1234567890


def backend(library, database, root, environment):
    """The backend, on `library` ("appstoreserverlibrary" or "libreceipt.appstoreserverlibrary"):
    the import lines are the only place the two runs differ. Returns handle(body) -> (status, text)."""
    verifier_module = importlib.import_module(library + ".signed_data_verifier")
    SignedDataVerifier = verifier_module.SignedDataVerifier
    VerificationException = verifier_module.VerificationException
    VerificationStatus = verifier_module.VerificationStatus
    from appstoreserverlibrary.models.AutoRenewStatus import AutoRenewStatus
    from appstoreserverlibrary.models.Data import Data
    from appstoreserverlibrary.models.Environment import Environment
    from appstoreserverlibrary.models.ExternalPurchaseToken import ExternalPurchaseToken
    from appstoreserverlibrary.models.NotificationTypeV2 import NotificationTypeV2
    from appstoreserverlibrary.models.Summary import Summary

    environment = Environment(environment)
    verifier = SignedDataVerifier([root], False, environment, BUNDLE_ID, APP_APPLE_ID)
    db = sqlite3.connect(database)
    db.executescript("""
        CREATE TABLE IF NOT EXISTS notifications (uuid TEXT PRIMARY KEY, type TEXT, subtype TEXT, signed TEXT,
                                                  environment TEXT);
        CREATE TABLE IF NOT EXISTS subscriptions (original_transaction_id TEXT PRIMARY KEY, product_id TEXT,
                                                  expires TEXT, active INTEGER, auto_renew INTEGER, kind TEXT,
                                                  ownership TEXT, renewal_product TEXT);
        CREATE TABLE IF NOT EXISTS summaries (request_identifier TEXT, succeeded INTEGER, failed INTEGER);
        CREATE TABLE IF NOT EXISTS tokens (external_purchase_id TEXT, app_apple_id INTEGER);""")
    ending = {NotificationTypeV2.EXPIRED, NotificationTypeV2.REFUND, NotificationTypeV2.REVOKE,
              NotificationTypeV2.GRACE_PERIOD_EXPIRED}

    def iso(milliseconds):
        if milliseconds is None:
            return None
        return datetime.datetime.fromtimestamp(milliseconds / 1000, tz=datetime.timezone.utc).isoformat()

    def handle(body):
        try:
            notification = verifier.verify_and_decode_notification(json.loads(body)["signedPayload"])
        except VerificationException as error:
            if error.status == VerificationStatus.RETRYABLE_VERIFICATION_FAILURE:
                return 503, error.status.name  # Apple retries
            return 400, error.status.name
        subtype = notification.subtype.name if notification.subtype else None
        with db:
            db.execute("INSERT OR REPLACE INTO notifications VALUES (?, ?, ?, ?, ?)",
                       (notification.notificationUUID, notification.notificationType.name, subtype,
                        iso(notification.signedDate), environment.name))
            if isinstance(notification.data, Data):
                data = notification.data
                if data.signedTransactionInfo:
                    transaction = verifier.verify_and_decode_signed_transaction(data.signedTransactionInfo)
                    renewal = (verifier.verify_and_decode_renewal_info(data.signedRenewalInfo)
                               if data.signedRenewalInfo else None)
                    active = notification.notificationType not in ending and transaction.revocationDate is None
                    db.execute("INSERT OR REPLACE INTO subscriptions VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                               (transaction.originalTransactionId, transaction.productId, iso(transaction.expiresDate),
                                int(active), int(renewal is not None and renewal.autoRenewStatus == AutoRenewStatus.ON),
                                transaction.type.name, transaction.inAppOwnershipType.name,
                                renewal.autoRenewProductId if renewal else None))
            elif isinstance(notification.summary, Summary):
                db.execute("INSERT INTO summaries VALUES (?, ?, ?)", (notification.summary.requestIdentifier,
                                                                      notification.summary.succeededCount,
                                                                      notification.summary.failedCount))
            elif isinstance(notification.externalPurchaseToken, ExternalPurchaseToken):
                db.execute("INSERT INTO tokens VALUES (?, ?)", (notification.externalPurchaseToken.externalPurchaseId,
                                                                notification.externalPurchaseToken.appAppleId))
        return 200, notification.notificationType.name

    return handle, db


# Apple's documented notification types with their subtypes (None: sent without one).
DOCUMENTED = {
    "SUBSCRIBED": ["INITIAL_BUY", "RESUBSCRIBE"], "DID_CHANGE_RENEWAL_PREF": ["UPGRADE", "DOWNGRADE", None],
    "DID_CHANGE_RENEWAL_STATUS": ["AUTO_RENEW_ENABLED", "AUTO_RENEW_DISABLED"],
    "OFFER_REDEEMED": ["INITIAL_BUY", "RESUBSCRIBE", "UPGRADE", "DOWNGRADE", None],
    "DID_RENEW": [None, "BILLING_RECOVERY"], "EXPIRED": ["VOLUNTARY", "BILLING_RETRY", "PRICE_INCREASE",
                                                       "PRODUCT_NOT_FOR_SALE"],
    "DID_FAIL_TO_RENEW": [None, "GRACE_PERIOD"], "GRACE_PERIOD_EXPIRED": [None],
    "PRICE_INCREASE": ["PENDING", "ACCEPTED"], "REFUND": [None], "REFUND_DECLINED": [None],
    "REFUND_REVERSED": [None], "CONSUMPTION_REQUEST": [None], "RENEWAL_EXTENDED": [None], "REVOKE": [None],
    "TEST": [None], "RENEWAL_EXTENSION": ["SUMMARY", "FAILURE"], "EXTERNAL_PURCHASE_TOKEN": ["UNREPORTED"],
    "ONE_TIME_CHARGE": [None], "METADATA_UPDATE": [None], "MIGRATION": [None], "PRICE_CHANGE": [None],
    "RESCIND_CONSENT": [None],
}


def body_of(mint_jws, payload, chains, variant=None):
    """Apple's POST body: the nested members signed, then the notification (`variant` breaks its own JWS)."""
    payload = dict(payload)
    if "data" in payload:
        payload["data"] = {name: mint_jws.sign(value, chains) if isinstance(value, dict) else value
                           for name, value in payload["data"].items()}
    return json.dumps({"signedPayload": mint_jws.sign(payload, chains, variant)})


def notifications(mint_jws, chains):
    """POST bodies, in order: every documented type and subtype in each environment, then forged ones."""
    bodies = []
    signed = int(mint_jws.NOW.timestamp() * 1000)
    for environment in ("Sandbox", "Production"):
        for number, (kind, subtype) in enumerate((k, s) for k, subs in DOCUMENTED.items() for s in subs):
            at = signed - 1000 * number
            original = str(2000000000000000 + number)
            payload = {"notificationType": kind, "notificationUUID": f"6f1f4a2e-0000-4000-8000-{number:06d}{len(bodies):06d}",
                       "version": "2.0", "signedDate": at}
            if subtype:
                payload["subtype"] = subtype
            if kind == "RENEWAL_EXTENSION" and subtype == "SUMMARY":
                payload["summary"] = {"requestIdentifier": "efb27071-45a4-4aca-9854-2a1e9146f265",
                                      "environment": environment, "appAppleId": APP_APPLE_ID, "bundleId": BUNDLE_ID,
                                      "productId": "com.example.minted.monthly", "storefrontCountryCodes": ["USA"],
                                      "succeededCount": 5, "failedCount": 2}
            elif kind == "EXTERNAL_PURCHASE_TOKEN":
                prefix = "SANDBOX_" if environment == "Sandbox" else ""
                payload["externalPurchaseToken"] = {"externalPurchaseId": f"{prefix}b2158121-7af9-49d4-9561-1f588205523e",
                                                    "tokenCreationDate": at, "appAppleId": APP_APPLE_ID,
                                                    "bundleId": BUNDLE_ID}
            else:
                data = {"appAppleId": APP_APPLE_ID, "bundleId": BUNDLE_ID, "bundleVersion": "1",
                        "environment": environment, "status": 1}
                if kind != "TEST":
                    transaction = dict(mint_jws.example_payload("transaction"), environment=environment,
                                       originalTransactionId=original, transactionId=str(int(original) + 7),
                                       signedDate=at)
                    if kind in ("REFUND", "REVOKE"):
                        transaction.update(revocationDate=at, revocationReason=0)
                    renewal = dict(mint_jws.example_payload("renewal_info"), environment=environment,
                                   originalTransactionId=original, signedDate=at,
                                   autoRenewStatus=0 if subtype == "AUTO_RENEW_DISABLED" else 1)
                    data.update(signedTransactionInfo=transaction, signedRenewalInfo=renewal)
                payload["data"] = data
            bodies.append(body_of(mint_jws, payload, chains))
            if number % 7 == 0:  # forged: the notification's payload changed after signing
                bodies.append(body_of(mint_jws, payload, chains, "payload-changed"))
    return bodies


@pytest.mark.parametrize("environment", ["Sandbox", "Production"])
def test_the_backend_answers_and_stores_alike_on_both_libraries(jws_ca, tmp_path, environment):
    import mint_jws
    from appstoreserverlibrary.models.NotificationTypeV2 import NotificationTypeV2
    from appstoreserverlibrary.models.Subtype import Subtype
    assert set(DOCUMENTED) >= {member.value for member in NotificationTypeV2}
    assert {s for subs in DOCUMENTED.values() for s in subs if s} >= {member.value for member in Subtype}
    root_pem, chains = jws_ca
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding
    root = x509.load_pem_x509_certificate(root_pem.read_bytes()).public_bytes(Encoding.DER)
    bodies = notifications(mint_jws, chains)
    runs = {}
    for library in ("appstoreserverlibrary", "libreceipt.appstoreserverlibrary"):
        handle, db = backend(library, tmp_path / f"{library}.sqlite", root, environment)
        answers = [handle(body) for body in bodies]
        runs[library] = (answers, "\n".join(db.iterdump()).encode())
        db.close()
    (apple_answers, apple_db), (our_answers, our_db) = runs.values()
    assert our_answers == apple_answers
    assert our_db == apple_db
    # Each environment's notifications handled, the other's refused as Apple refuses them, forged ones too.
    assert [status for status, _ in our_answers].count(200) == sum(len(subs) for subs in DOCUMENTED.values())
    assert {text for status, text in our_answers if status != 200} == {"INVALID_ENVIRONMENT", "VERIFICATION_FAILURE"}
    assert our_db.count(b"INSERT INTO \"subscriptions\"") > 20 and b"INSERT INTO \"summaries\"" in our_db
    assert "libreceipt" in sys.modules["libreceipt.appstoreserverlibrary.signed_data_verifier"].__name__
