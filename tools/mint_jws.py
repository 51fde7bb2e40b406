#!/usr/bin/env python3
"""Mint App Store-shaped StoreKit 2 JWS signed by a test CA of your own.

The CA is shaped like Apple's: a P-384 root signs a P-384 intermediate that
carries Apple's marker 1.2.840.113635.100.6.2.1, which signs a P-256 leaf that
carries 1.2.840.113635.100.6.11.1. A JWS is ES256 over base64url(header) "."
base64url(payload), with x5c = [leaf, intermediate, root]. It verifies only when
you add root.pem as an anchor (`receipt verify --anchor root.pem --no-apple-root`):
nothing minted here can ever pass for Apple's.

    mint_jws.py ca DIR
        Create a test CA in DIR: root.pem (the anchor to add), the chain and keys,
        and the certificates the attack variants need.
    mint_jws.py ca DIR --ocsp-url URL --intermediate-ocsp-url URL
        The same, with OCSP responders named in the certificates (Authority Information Access:
        the leaf's URL is answered for the intermediate, the intermediate's for the root), and
        what `openssl ocsp` needs to be those responders in DIR/ocsp/ (keys, certificates, and an
        index per issuer). Run them with the commands `mint_jws.py responders DIR` prints.
    mint_jws.py revoke DIR leaf|intermediate
        Marks that certificate revoked in its responder's index (restart the responder).
    mint_jws.py notifications DIR --ca CA [--original-transaction-id ID] [--app-account-token UUID] [--jws]
        Write one subscription's App Store Server Notifications V2, as Apple posts them
        (`{"signedPayload": …}`, numbered in the order they happened): SUBSCRIBED, two
        DID_RENEW, DID_CHANGE_RENEWAL_STATUS off and on, a REFUND of the first renewal, and
        DID_FAIL_TO_RENEW into a grace period that lasts past now. Each carries its signed
        transaction and renewal info. --jws writes each notification's JWS alone.
    mint_jws.py sign OUT --ca DIR [--payload PAYLOAD.json] [--kind transaction|renewal_info|notification]
                   [--variant NAME]
        Sign a payload (a transaction of com.example.minted in Sandbox by default).
        --variant breaks exactly one property, for negative tests (VARIANTS).

Needs Python 3.8+ and the `cryptography` package.
"""
import argparse
import base64
import datetime
import hashlib
import hmac
import json
import os
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import AuthorityInformationAccessOID, NameOID, ObjectIdentifier

INTERMEDIATE_MARKER = ObjectIdentifier("1.2.840.113635.100.6.2.1")
LEAF_MARKER = ObjectIdentifier("1.2.840.113635.100.6.11.1")
NOW = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)

# Each variant breaks one property; the status libreceipt must refuse it with.
VARIANTS = {
    "alg-none": "RECEIPT_E_ALGORITHM_REFUSED",
    "hs256-public-key": "RECEIPT_E_ALGORITHM_REFUSED",
    "rs256": "RECEIPT_E_ALGORITHM_REFUSED",
    "crit": "RECEIPT_E_CRITICAL_UNSUPPORTED",
    "der-signature": "RECEIPT_E_BAD_SIGNATURE_ENCODING",
    "short-signature": "RECEIPT_E_BAD_SIGNATURE_ENCODING",
    "x5c-reordered": "RECEIPT_E_UNEXPECTED_CERTIFICATES",
    "x5c-shortened": "RECEIPT_E_CERTIFICATE_COUNT",
    "x5c-lengthened": "RECEIPT_E_CERTIFICATE_COUNT",
    "other-root": "RECEIPT_E_CHAIN_UNTRUSTED",
    "no-leaf-marker": "RECEIPT_E_MISSING_LEAF_MARKER",
    "no-intermediate-marker": "RECEIPT_E_MISSING_INTERMEDIATE_MARKER",
    "leaf-expired": "RECEIPT_E_CHAIN_NOT_VALID_AT_CREATION",
    "payload-changed": "RECEIPT_E_SIGNATURE_INVALID",
    "payload-null": "RECEIPT_E_NOT_AN_OBJECT",
    "payload-number": "RECEIPT_E_NOT_AN_OBJECT",
    "payload-array": "RECEIPT_E_NOT_AN_OBJECT",
    "duplicate-keys": "RECEIPT_E_DUPLICATE_MEMBER",
    "deep-nesting": "RECEIPT_E_NESTING_TOO_DEEP",
    "bad-base64url": "RECEIPT_E_BAD_BASE64URL",
    "no-signed-date": "RECEIPT_E_NO_CREATION_DATE",
}
# Variants that leave no readable JWS (exit 2) rather than a verdict (exit 1).
UNREADABLE = {"payload-null", "payload-number", "payload-array", "duplicate-keys", "deep-nesting", "bad-base64url"}


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def name(common_name):
    return x509.Name([x509.NameAttribute(NameOID.COUNTRY_NAME, "US"),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "libreceipt test CA"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def certificate(subject, issuer_name, public_key, signing_key, not_before, not_after, is_ca, marker=None,
                ocsp_url=None):
    """Shaped like Apple's, key identifiers included (strict verifiers such as
    pyOpenSSL's, which Apple's Python library uses, require the authority's)."""
    builder = (x509.CertificateBuilder().subject_name(name(subject)).issuer_name(name(issuer_name))
               .public_key(public_key).serial_number(x509.random_serial_number())
               .not_valid_before(not_before).not_valid_after(not_after)
               .add_extension(x509.BasicConstraints(ca=is_ca, path_length=None), critical=True)
               .add_extension(x509.KeyUsage(digital_signature=not is_ca, content_commitment=False,
                                            key_encipherment=False, data_encipherment=False, key_agreement=False,
                                            key_cert_sign=is_ca, crl_sign=is_ca, encipher_only=False,
                                            decipher_only=False), critical=True))
    builder = builder.add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
    builder = builder.add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(signing_key.public_key()),
                                    critical=False)
    if marker is not None:
        builder = builder.add_extension(x509.UnrecognizedExtension(marker, b"\x05\x00"), critical=False)
    if ocsp_url is not None:
        builder = builder.add_extension(x509.AuthorityInformationAccess([x509.AccessDescription(
            AuthorityInformationAccessOID.OCSP, x509.UniformResourceIdentifier(ocsp_url))]), critical=False)
    return builder.sign(signing_key, hashes.SHA384())


def make_chain(root_name, not_after_leaf=None, not_before_leaf=None, leaf_marker=True, intermediate_marker=True,
               root=None, ocsp=(None, None), keys=None):
    """(root cert, root key, intermediate cert, leaf cert, leaf key); the root is made unless given.
    ocsp: the responder URLs the leaf and the intermediate name; keys: a dict that receives the
    intermediate's key (an OCSP responder signs with it)."""
    year = datetime.timedelta(days=365)
    if root is None:
        root_key = ec.generate_private_key(ec.SECP384R1())
        root_cert = certificate(root_name, root_name, root_key.public_key(), root_key, NOW - 10 * year,
                                NOW + 20 * year, True)
    else:
        root_cert, root_key = root
    inter_key = ec.generate_private_key(ec.SECP384R1())
    inter_cert = certificate(root_name + " WWDR", root_name, inter_key.public_key(), root_key, NOW - 5 * year,
                             NOW + 10 * year, True, INTERMEDIATE_MARKER if intermediate_marker else None, ocsp[1])
    if keys is not None:
        keys["intermediate"] = inter_key
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf_cert = certificate(root_name + " Receipt Signing", root_name + " WWDR", leaf_key.public_key(), inter_key,
                            not_before_leaf or NOW - year, not_after_leaf or NOW + 2 * year, False,
                            LEAF_MARKER if leaf_marker else None, ocsp[0])
    return root_cert, root_key, inter_cert, leaf_cert, leaf_key


def pem(cert):
    return cert.public_bytes(serialization.Encoding.PEM)


def key_pem(key):
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def create_ca(directory, ocsp=(None, None)):
    os.makedirs(directory, exist_ok=True)
    year = datetime.timedelta(days=365)
    keys = {}
    root, root_key, inter, leaf, leaf_key = make_chain("libreceipt JWS test root", ocsp=ocsp, keys=keys)
    if ocsp[0] or ocsp[1]:
        write_responders(os.path.join(directory, "ocsp"), root, root_key, inter, keys["intermediate"], leaf, ocsp)
    chains = {"good": (inter, leaf, leaf_key)}
    for label, kwargs in {"no-leaf-marker": {"leaf_marker": False},
                          "no-intermediate-marker": {"intermediate_marker": False},
                          "leaf-expired": {"not_before_leaf": NOW - 3 * year, "not_after_leaf": NOW - 2 * year}}.items():
        _, _, other_inter, other_leaf, other_key = make_chain("libreceipt JWS test root", root=(root, root_key),
                                                              **kwargs)
        chains[label] = (other_inter, other_leaf, other_key)
    other_root, _, other_inter, other_leaf, other_key = make_chain("libreceipt JWS other root")
    with open(os.path.join(directory, "root.pem"), "wb") as out:
        out.write(pem(root))
    with open(os.path.join(directory, "chains.pem"), "wb") as out:
        for label, (i, l, k) in chains.items():
            out.write(f"# {label}\n".encode() + pem(i) + pem(l) + key_pem(k))
        out.write(b"# other-root\n" + pem(other_root) + pem(other_inter) + pem(other_leaf) + key_pem(other_key))


def index_line(cert, revoked_at=None):
    """One line of an `openssl ocsp` index (the `openssl ca` database format)."""
    # not_valid_after_utc is cryptography 42's; Debian's python3-cryptography (38) has the naive UTC one.
    expiry = getattr(cert, "not_valid_after_utc", None) or cert.not_valid_after
    expiry = expiry.strftime("%y%m%d%H%M%SZ")
    revoked = revoked_at.strftime("%y%m%d%H%M%SZ") if revoked_at else ""
    subject = "/" + "/".join(f"{a.oid._name if a.oid._name != 'countryName' else 'C'}={a.value}"
                             .replace("organizationName", "O").replace("commonName", "CN") for a in cert.subject)
    return f"{'R' if revoked_at else 'V'}\t{expiry}\t{revoked}\t{cert.serial_number:X}\tunknown\t{subject}\n"


def write_responders(directory, root, root_key, inter, inter_key, leaf, urls):
    """What two `openssl ocsp` responders need: the intermediate answers for the leaf, the root
    for the intermediate, each from an index that says every certificate is good."""
    os.makedirs(directory, exist_ok=True)
    files = {"root.pem": pem(root), "root-key.pem": key_pem(root_key), "intermediate.pem": pem(inter),
             "intermediate-key.pem": key_pem(inter_key), "leaf.pem": pem(leaf),
             "leaf.index": index_line(leaf).encode(), "intermediate.index": index_line(inter).encode(),
             "urls.json": json.dumps({"leaf": urls[0], "intermediate": urls[1]}).encode()}
    for file, data in files.items():
        with open(os.path.join(directory, file), "wb") as out:
            out.write(data)


def responder_commands(directory, minutes=5):
    """The `openssl ocsp` command lines of the two responders (leaf's, intermediate's)."""
    ocsp = os.path.join(directory, "ocsp")
    urls = json.load(open(os.path.join(ocsp, "urls.json")))
    commands = {}
    for which, issuer, key in (("leaf", "intermediate.pem", "intermediate-key.pem"),
                               ("intermediate", "root.pem", "root-key.pem")):
        port = urls[which].rsplit(":", 1)[1].split("/")[0]
        commands[which] = ["openssl", "ocsp", "-index", os.path.join(ocsp, f"{which}.index"), "-port", port,
                           "-rsigner", os.path.join(ocsp, issuer), "-rkey", os.path.join(ocsp, key),
                           "-CA", os.path.join(ocsp, issuer), "-nmin", str(minutes)]
    return commands


def revoke(directory, which):
    """Marks the leaf or the intermediate revoked in its responder's index."""
    ocsp = os.path.join(directory, "ocsp")
    cert = x509.load_pem_x509_certificate(open(os.path.join(ocsp, f"{which}.pem" if which == "leaf"
                                                            else "intermediate.pem"), "rb").read())
    with open(os.path.join(ocsp, f"{which}.index"), "w") as out:
        out.write(index_line(cert, revoked_at=NOW - datetime.timedelta(hours=1)))


def load_ca(directory):
    """{label: [certs...], key}: the root, and per chain its certificates (root last) and leaf key."""
    root = x509.load_pem_x509_certificate(open(os.path.join(directory, "root.pem"), "rb").read())
    text = open(os.path.join(directory, "chains.pem"), "rb").read().decode()
    chains = {}
    for block in text.split("# ")[1:]:
        label, body = block.split("\n", 1)
        pems = ["-----BEGIN" + part for part in body.split("-----BEGIN")[1:]]
        certs = [x509.load_pem_x509_certificate(p.encode()) for p in pems if "CERTIFICATE" in p.split("\n")[0]]
        key = serialization.load_pem_private_key([p for p in pems if "PRIVATE KEY" in p.split("\n")[0]][0].encode(),
                                                 password=None)
        if label == "other-root":
            other_root, inter, leaf = certs
            chains[label] = ([leaf, inter, other_root], key)
        else:
            inter, leaf = certs
            chains[label] = ([leaf, inter, root], key)
    return chains


def example_payload(kind="transaction"):
    signed = int(NOW.timestamp() * 1000)
    if kind == "renewal_info":
        return {"originalTransactionId": "2000000000000001", "autoRenewProductId": "com.example.minted.monthly",
                "productId": "com.example.minted.monthly", "autoRenewStatus": 1, "signedDate": signed,
                "environment": "Sandbox", "renewalDate": signed + 30 * 86_400_000}
    transaction = {"transactionId": "2000000000000002", "originalTransactionId": "2000000000000001",
                   "bundleId": "com.example.minted", "productId": "com.example.minted.monthly",
                   "purchaseDate": signed - 60_000, "originalPurchaseDate": signed - 86_400_000,
                   "expiresDate": signed + 30 * 86_400_000, "quantity": 1, "type": "Auto-Renewable Subscription",
                   "inAppOwnershipType": "PURCHASED", "signedDate": signed, "environment": "Sandbox",
                   "transactionReason": "PURCHASE", "storefront": "USA", "storefrontId": "143441", "price": 4990,
                   "currency": "USD", "webOrderLineItemId": "2000000000000003"}
    if kind == "notification":
        return {"notificationType": "DID_RENEW", "notificationUUID": "6f1f4a2e-0000-4000-8000-000000000001",
                "version": "2.0", "signedDate": signed,
                "data": {"appAppleId": 1234567890, "bundleId": "com.example.minted", "bundleVersion": "1",
                         "environment": "Sandbox", "status": 1}}
    return transaction


DAY = 86_400_000


def notification_story(original_id="2000000000000001", app_account_token="7e3fb20b-4cdb-47cc-936d-99d65f608138",
                       bundle_id="com.example.minted", environment="Sandbox", app_apple_id=1234567890, now=None):
    """One monthly subscription's notifications, oldest first: (name, payload) pairs whose nested
    members are payloads still to sign (`sign_story` signs them). Bought 95 days before `now`; the
    first renewal refunded; the third period ended 5 days ago and its renewal failed into a
    16-day grace period, so that now the subscription is in its grace period (Apple's status 4)."""
    now = int(NOW.timestamp() * 1000) if now is None else now
    start = now - 95 * DAY
    product = "com.example.minted.monthly"

    def transaction(index, signed, **extra):
        purchase = start + index * 30 * DAY
        # The first purchase's id is the original's, as Apple's are; each renewal's and each
        # period's line item are the original's with two digits added, so that no two customers
        # minted with different original ids ever share one.
        return dict({"transactionId": original_id if index == 0 else f"{original_id}{index:02d}",
                     "originalTransactionId": original_id,
                     "webOrderLineItemId": f"{original_id}{50 + index:02d}", "bundleId": bundle_id,
                     "productId": product, "subscriptionGroupIdentifier": "21000001", "purchaseDate": purchase,
                     "originalPurchaseDate": start, "expiresDate": purchase + 30 * DAY, "quantity": 1,
                     "type": "Auto-Renewable Subscription", "appAccountToken": app_account_token,
                     "inAppOwnershipType": "PURCHASED", "signedDate": signed, "environment": environment,
                     "transactionReason": "RENEWAL" if index else "PURCHASE", "storefront": "USA",
                     "storefrontId": "143441", "price": 4990, "currency": "USD"}, **extra)

    def renewal(signed, **extra):
        return dict({"originalTransactionId": original_id, "autoRenewProductId": product, "productId": product,
                     "autoRenewStatus": 1, "signedDate": signed, "environment": environment,
                     "recentSubscriptionStartDate": start, "renewalDate": start + 90 * DAY}, **extra)

    events = [  # (type, subtype, when, transaction index, transaction extras, renewal extras)
        ("SUBSCRIBED", "INITIAL_BUY", start, 0, {}, {}),
        ("DID_RENEW", None, start + 30 * DAY, 1, {}, {}),
        ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", start + 40 * DAY, 1, {}, {"autoRenewStatus": 0}),
        ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED", start + 45 * DAY, 1, {}, {}),
        ("REFUND", None, start + 50 * DAY, 1, {"revocationDate": start + 50 * DAY, "revocationReason": 0}, {}),
        ("DID_RENEW", None, start + 60 * DAY, 2, {}, {}),
        ("DID_FAIL_TO_RENEW", "GRACE_PERIOD", start + 90 * DAY, 2, {},
         {"expirationIntent": 2, "isInBillingRetryPeriod": True, "gracePeriodExpiresDate": start + 106 * DAY}),
    ]
    story = []
    for number, (kind, subtype, when, index, transaction_extra, renewal_extra) in enumerate(events, 1):
        signed = when + number  # distinct signing instants, in the order things happened
        notification = {"notificationType": kind, "notificationUUID": f"6f1f4a2e-0000-4000-8000-{int(original_id) % 10**6:06d}{number:06d}",
                        "version": "2.0", "signedDate": signed,
                        "data": {"appAppleId": app_apple_id, "bundleId": bundle_id, "bundleVersion": "1",
                                 "environment": environment, "status": 4 if kind == "DID_FAIL_TO_RENEW" else 1,
                                 "signedTransactionInfo": transaction(index, signed, **transaction_extra),
                                 "signedRenewalInfo": renewal(signed, **renewal_extra)}}
        if subtype:
            notification["subtype"] = subtype
        story.append((f"{number:02d}-{kind}" + (f"-{subtype}" if subtype else ""), notification))
    return story


def sign_notification(notification, chains, variant=None):
    """Apple's POST body for a notification whose nested members are payloads: each nested
    member signed, then the notification (`variant` breaks the notification's own JWS)."""
    data = dict(notification["data"])
    for member in ("signedTransactionInfo", "signedRenewalInfo"):
        if isinstance(data.get(member), dict):
            data[member] = sign(data[member], chains)
    return json.dumps({"signedPayload": sign(dict(notification, data=data), chains, variant)})


def es256(key, data):
    r, s = decode_dss_signature(key.sign(data, ec.ECDSA(hashes.SHA256())))
    return r.to_bytes(32, "big") + s.to_bytes(32, "big")


def sign(payload, chains, variant=None, payload_text=None):
    """A compact JWS of `payload` (or of `payload_text` exactly), broken by `variant`."""
    certs, key = chains["other-root" if variant == "other-root" else
                        variant if variant in ("no-leaf-marker", "no-intermediate-marker", "leaf-expired") else "good"]
    x5c = [base64.b64encode(c.public_bytes(serialization.Encoding.DER)).decode() for c in certs]
    header = {"alg": "ES256", "x5c": x5c}
    if variant == "x5c-reordered":
        header["x5c"] = [x5c[1], x5c[0], x5c[2]]
    elif variant == "x5c-shortened":
        header["x5c"] = [x5c[0], x5c[2]]
    elif variant == "x5c-lengthened":
        other = chains["no-leaf-marker"][0][1]
        header["x5c"] = x5c + [base64.b64encode(other.public_bytes(serialization.Encoding.DER)).decode()]
    elif variant == "alg-none":
        header["alg"] = "none"
    elif variant == "hs256-public-key":
        header["alg"] = "HS256"
    elif variant == "rs256":
        header["alg"] = "RS256"
    elif variant == "crit":
        header["crit"] = ["b64"]
        header["b64"] = True
    if variant == "no-signed-date":
        payload = {k: v for k, v in payload.items() if k != "signedDate"}
    body = {"payload-null": "null", "payload-number": "42", "payload-array": "[1,2]",
            "duplicate-keys": json.dumps(payload)[:-1] + ', "bundleId": "com.attacker"}',
            "deep-nesting": '{"a":' * 40 + "1" + "}" * 40}.get(variant)
    if body is None:
        body = payload_text if payload_text is not None else json.dumps(payload, separators=(",", ":"))
    signing_input = (b64url(json.dumps(header, separators=(",", ":")).encode()) + "." + b64url(body.encode())).encode()
    if variant == "alg-none":
        signature = b""
    elif variant == "hs256-public-key":
        public = certs[0].public_key().public_bytes(serialization.Encoding.PEM,
                                                    serialization.PublicFormat.SubjectPublicKeyInfo)
        signature = hmac.new(public, signing_input, hashlib.sha256).digest()
    elif variant == "rs256":
        signature = rsa.generate_private_key(65537, 2048).sign(signing_input, padding.PKCS1v15(), hashes.SHA256())
    elif variant == "der-signature":
        signature = key.sign(signing_input, ec.ECDSA(hashes.SHA256()))
    elif variant == "short-signature":
        signature = es256(key, signing_input)[:63]
    else:
        signature = es256(key, signing_input)
    token = signing_input.decode() + "." + b64url(signature)
    if variant == "payload-changed":
        head, _, tail = token.split(".")
        changed = dict(payload, bundleId="com.attacker")
        token = head + "." + b64url(json.dumps(changed, separators=(",", ":")).encode()) + "." + tail
    elif variant == "bad-base64url":
        head, middle, tail = token.split(".")
        token = head + "." + middle + "==." + tail
    return token


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    ca = commands.add_parser("ca")
    ca.add_argument("directory")
    ca.add_argument("--ocsp-url", help="the leaf's OCSP responder (answered for the intermediate)")
    ca.add_argument("--intermediate-ocsp-url", help="the intermediate's OCSP responder (answered for the root)")
    revoking = commands.add_parser("revoke")
    revoking.add_argument("directory")
    revoking.add_argument("which", choices=["leaf", "intermediate"])
    responders = commands.add_parser("responders")
    responders.add_argument("directory")
    story = commands.add_parser("notifications")
    story.add_argument("directory")
    story.add_argument("--ca", required=True)
    story.add_argument("--original-transaction-id", default="2000000000000001")
    story.add_argument("--app-account-token", default="7e3fb20b-4cdb-47cc-936d-99d65f608138")
    story.add_argument("--bundle-id", default="com.example.minted")
    story.add_argument("--jws", action="store_true", help="write each notification's JWS (NAME.jws), not Apple's POST body")
    signing = commands.add_parser("sign")
    signing.add_argument("out")
    signing.add_argument("--ca", required=True)
    signing.add_argument("--payload")
    signing.add_argument("--kind", choices=["transaction", "renewal_info", "notification"], default="transaction")
    signing.add_argument("--variant", choices=sorted(VARIANTS))
    args = parser.parse_args(argv)
    if args.command == "revoke":
        revoke(args.directory, args.which)
        return 0
    if args.command == "responders":
        for which, command in responder_commands(args.directory).items():
            print(" ".join(command) + f"   # the {which}'s responder")
        return 0
    if args.command == "ca":
        create_ca(args.directory, (args.ocsp_url, args.intermediate_ocsp_url))
        print(f"JWS test CA in {args.directory}; trust it with --anchor {os.path.join(args.directory, 'root.pem')} "
              f"(and --no-apple-root to trust only it); sign with: mint_jws.py sign OUT --ca {args.directory}")
        return 0
    if args.command == "notifications":
        os.makedirs(args.directory, exist_ok=True)
        chains = load_ca(args.ca)
        for name, notification in notification_story(args.original_transaction_id, args.app_account_token, args.bundle_id):
            body = sign_notification(notification, chains)
            path = os.path.join(args.directory, name + (".jws" if args.jws else ".json"))
            with open(path, "w") as out:
                out.write((json.loads(body)["signedPayload"] if args.jws else body) + "\n")
            print(path)
        return 0
    payload_text = open(args.payload).read() if args.payload else None
    payload = json.loads(payload_text) if payload_text else example_payload(args.kind)
    token = sign(payload, load_ca(args.ca), args.variant, payload_text if args.variant is None else None)
    with open(args.out, "w") as out:
        out.write(token + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
