#!/usr/bin/env python3
"""Mint App Store-shaped receipts signed by a test CA of your own.

Use it to test your server against receipts for any scenario, and to feed
libreceipt's tests. The CA is shaped like Apple's. A root signs an intermediate
that carries Apple's marker 1.2.840.113635.100.6.2.1, and the intermediate signs
a leaf that carries 1.2.840.113635.100.6.11.1. A receipt verifies against this
CA only when you add root.pem as an anchor (`receipt verify --anchor root.pem
--no-apple-root`). Nothing minted here can ever pass for Apple's.

    mint_receipt.py ca DIR
        Create a test CA in DIR: root.pem (the anchor to add) and the keys.
    mint_receipt.py receipt OUT --ca DIR [--spec SPEC.json] [--purchases N]
                    [--ber] [--digest sha1|sha256] [--base64] [--variant NAME]
        Mint a receipt. SPEC.json gives any field (see example_spec() below).
        --variant breaks exactly one property, for negative tests (VARIANTS).

Needs Python 3.8+ and the `cryptography` package (pip install cryptography).
"""
import argparse
import base64
import datetime
import hashlib
import json
import os
import sys

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

# ----------------------------------------------------------------- DER


def der_length(n):
    if n < 0x80:
        return bytes([n])
    body = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(body)]) + body


def tlv(tag, body):
    return bytes([tag]) + der_length(len(body)) + body


def ber_indefinite(tag, body):
    return bytes([tag, 0x80]) + body + b"\x00\x00"


def integer(value):
    length = max(1, (value.bit_length() + 8) // 8)
    return tlv(0x02, value.to_bytes(length, "big", signed=True))


def oid(dotted):
    arcs = [int(a) for a in dotted.split(".")]
    body = bytes([arcs[0] * 40 + arcs[1]])
    for arc in arcs[2:]:
        chunk = [arc & 0x7F]
        arc >>= 7
        while arc:
            chunk.insert(0, 0x80 | (arc & 0x7F))
            arc >>= 7
        body += bytes(chunk)
    return tlv(0x06, body)


def seq(*parts):
    return tlv(0x30, b"".join(parts))


def der_set(parts, sort=True):
    return tlv(0x31, b"".join(sorted(parts) if sort else parts))


def utf8(text):
    return tlv(0x0C, text.encode("utf-8"))


def ia5(text):
    return tlv(0x16, text.encode("ascii"))


def utc_time(moment):
    if 1950 <= moment.year < 2050:
        return tlv(0x17, moment.strftime("%y%m%d%H%M%SZ").encode())
    return tlv(0x18, moment.strftime("%Y%m%d%H%M%SZ").encode())


NULL = b"\x05\x00"
OIDS = {
    "sha1": "1.3.14.3.2.26", "sha256": "2.16.840.1.101.3.4.2.1", "sha512": "2.16.840.1.101.3.4.2.3",
    "sha1WithRSA": "1.2.840.113549.1.1.5", "sha256WithRSA": "1.2.840.113549.1.1.11",
    "rsaEncryption": "1.2.840.113549.1.1.1", "signedData": "1.2.840.113549.1.7.2", "data": "1.2.840.113549.1.7.1",
    "intermediateMarker": "1.2.840.113635.100.6.2.1", "leafMarker": "1.2.840.113635.100.6.11.1",
    "basicConstraints": "2.5.29.19", "keyUsage": "2.5.29.15",
}
HASHES = {"sha1": hashes.SHA1(), "sha256": hashes.SHA256(), "sha512": hashes.SHA512()}

# ----------------------------------------------------------------- certificates


def name(common_name):
    return seq(der_set([seq(oid("2.5.4.6"), tlv(0x13, b"US"))]),
               der_set([seq(oid("2.5.4.10"), utf8("libreceipt test CA"))]),
               der_set([seq(oid("2.5.4.3"), utf8(common_name))]))


def extension(dotted, value, critical=False):
    return seq(oid(dotted), b"\x01\x01\xff" if critical else b"", tlv(0x04, value))


def certificate(subject, issuer, public_key, signing_key, serial, not_before, not_after, is_ca, markers,
                digest="sha256", key_usage=None):
    """key_usage: the keyUsage BIT STRING's content bytes, to override the usual (keyCertSign and
    cRLSign for a CA, digitalSignature otherwise); b"" leaves the extension out."""
    spki = public_key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    usage = key_usage if key_usage is not None else (b"\x01\x06" if is_ca else b"\x07\x80")
    extensions = [extension(OIDS["basicConstraints"], seq(b"\x01\x01\xff") if is_ca else seq(), critical=True)]
    if usage:
        extensions.append(extension(OIDS["keyUsage"], tlv(0x03, usage), critical=True))
    extensions += [extension(OIDS[m], NULL) for m in markers]
    algorithm = seq(oid(OIDS[digest + "WithRSA"]), NULL)
    tbs = seq(tlv(0xA0, integer(2)), integer(serial), algorithm, name(issuer),
              seq(utc_time(not_before), utc_time(not_after)), name(subject), spki, tlv(0xA3, seq(*extensions)))
    signature = signing_key.sign(tbs, padding.PKCS1v15(), HASHES[digest])
    return seq(tbs, algorithm, tlv(0x03, b"\x00" + signature))


def new_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def pem_certificate(der):
    body = base64.encodebytes(der).decode()
    return f"-----BEGIN CERTIFICATE-----\n{body}-----END CERTIFICATE-----\n"


FAR_PAST = datetime.datetime(2000, 1, 1)
FAR_FUTURE = datetime.datetime(2099, 1, 1)
ROOT_NAME, INTERMEDIATE_NAME, LEAF_NAME = ("libreceipt Test Root CA", "libreceipt Test WWDR Intermediate",
                                           "libreceipt Test Receipt Signing")


class CA:
    """A root key and certificate, and an intermediate with Apple's marker, on disk."""

    def __init__(self, directory):
        self.directory = directory

        def load(stem):
            with open(os.path.join(directory, stem + ".key"), "rb") as f:
                key = serialization.load_pem_private_key(f.read(), None)
            with open(os.path.join(directory, stem + ".der"), "rb") as f:
                return key, f.read()

        self.root_key, self.root = load("root")
        self.intermediate_key, self.intermediate = load("intermediate")

    @staticmethod
    def create(directory, intermediate_markers=("intermediateMarker",)):
        os.makedirs(directory, exist_ok=True)
        root_key, intermediate_key = new_key(), new_key()
        root = certificate(ROOT_NAME, ROOT_NAME, root_key.public_key(), root_key, 1, FAR_PAST, FAR_FUTURE, True, [])
        intermediate = certificate(INTERMEDIATE_NAME, ROOT_NAME, intermediate_key.public_key(), root_key, 2,
                                   FAR_PAST, FAR_FUTURE, True, intermediate_markers)
        for stem, key, der in (("root", root_key, root), ("intermediate", intermediate_key, intermediate)):
            with open(os.path.join(directory, stem + ".key"), "wb") as f:
                f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
            with open(os.path.join(directory, stem + ".der"), "wb") as f:
                f.write(der)
        with open(os.path.join(directory, "root.pem"), "w") as f:
            f.write(pem_certificate(root))
        return CA(directory)

    def leaf(self, created, markers=("leafMarker",), valid=None, digest="sha256"):
        key = new_key()
        not_before, not_after = valid or (created - datetime.timedelta(days=365), created + datetime.timedelta(days=365))
        der = certificate(LEAF_NAME, INTERMEDIATE_NAME, key.public_key(), self.intermediate_key, 1000,
                          not_before, not_after, False, markers, digest)
        return key, der

# ----------------------------------------------------------------- payload


def example_spec():
    """Every field a receipt can carry; a spec file may give any subset."""
    return {
        "receipt_type": "ProductionSandbox", "app_item_id": 0, "bundle_id": "com.example.minted",
        "application_version": "42", "opaque_hex": "000102030405060708090a0b0c0d0e0f",
        "device_id_hex": "a0b1c2d3e4f5", "receipt_creation_date": "2024-03-01T10:00:00Z",
        "version_external_identifier": 0, "original_purchase_date": "2013-08-01T07:00:00Z",
        "original_application_version": "1.0", "expiration_date": None,
        "unknown": [{"type": 99, "hex": "010203"}],
        "in_app": [],
    }


def example_purchase(index):
    day = 1 + index % 28
    return {
        "quantity": 1, "product_id": f"com.example.product.{index % 3}", "transaction_id": str(1000000000 + index),
        "original_transaction_id": "1000000000", "purchase_date": f"2024-03-{day:02d}T10:00:00Z",
        "original_purchase_date": "2024-03-01T10:00:00.250Z", "product_type": 3,
        "expires_date": f"2024-04-{day:02d}T10:00:00Z", "web_order_line_item_id": 2000000000000 + index,
        "cancellation_date": "", "is_trial_period": 1 if index == 0 else 0, "is_in_intro_offer_period": 0,
        "promotional_offer_id": None, "unknown": [{"type": 1799, "utf8": "kept raw"}],
    }


APP_FIELDS = {"receipt_type": (0, utf8), "app_item_id": (1, integer), "bundle_id": (2, utf8),
              "application_version": (3, utf8), "receipt_creation_date": (12, ia5),
              "version_external_identifier": (16, integer), "original_purchase_date": (18, ia5),
              "original_application_version": (19, utf8), "expiration_date": (21, ia5)}
IN_APP_FIELDS = {"quantity": (1701, integer), "product_id": (1702, utf8), "transaction_id": (1703, utf8),
                 "purchase_date": (1704, ia5), "original_transaction_id": (1705, utf8),
                 "original_purchase_date": (1706, ia5), "product_type": (1707, integer),
                 "expires_date": (1708, ia5), "web_order_line_item_id": (1711, integer),
                 "cancellation_date": (1712, ia5), "is_trial_period": (1713, integer),
                 "is_in_intro_offer_period": (1719, integer), "promotional_offer_id": (1721, utf8)}


def attribute(type_, value):
    return seq(integer(type_), integer(1), tlv(0x04, value))


def unknown_attributes(entries):
    return [attribute(e["type"], bytes.fromhex(e["hex"]) if "hex" in e else utf8(e["utf8"])) for e in entries]


def payload(spec):
    attributes = [attribute(t, encode(spec[k])) for k, (t, encode) in APP_FIELDS.items() if spec.get(k) is not None]
    bundle_raw = utf8(spec["bundle_id"])
    opaque = bytes.fromhex(spec["opaque_hex"])
    attributes.append(attribute(4, opaque))
    device = bytes.fromhex(spec["device_id_hex"])
    attributes.append(attribute(5, hashlib.sha1(device + opaque + bundle_raw).digest()))
    attributes += unknown_attributes(spec.get("unknown", []))
    for purchase in spec.get("in_app", []):
        fields = [attribute(t, encode(purchase[k])) for k, (t, encode) in IN_APP_FIELDS.items()
                  if purchase.get(k) is not None]
        fields += unknown_attributes(purchase.get("unknown", []))
        attributes.append(attribute(17, der_set(fields)))
    return der_set(attributes)

# ----------------------------------------------------------------- PKCS #7


def signed_data(content, certificates, signer_key, signer_certificate_der, digest, ber, signer_present=True,
                signature=None):
    issuer, serial = issuer_and_serial(signer_certificate_der)
    digest_algorithm = seq(oid(OIDS[digest]), NULL)
    if signature is None:
        signature = signer_key.sign(content, padding.PKCS1v15(), HASHES[digest])
    signer = seq(integer(1), seq(issuer, serial), digest_algorithm, seq(oid(OIDS["rsaEncryption"]), NULL),
                 tlv(0x04, signature))
    signers = der_set([signer]) if signer_present else der_set([])
    if ber:
        chunks = b"".join(tlv(0x04, content[i:i + 1000]) for i in range(0, len(content), 1000))
        encapsulated = ber_indefinite(0x30, oid(OIDS["data"]) + ber_indefinite(0xA0, ber_indefinite(0x24, chunks)))
        body = integer(1) + der_set([digest_algorithm]) + encapsulated + ber_indefinite(0xA0, b"".join(certificates)) + signers
        return ber_indefinite(0x30, oid(OIDS["signedData"]) + ber_indefinite(0xA0, ber_indefinite(0x30, body)))
    encapsulated = seq(oid(OIDS["data"]), tlv(0xA0, tlv(0x04, content)))
    body = integer(1) + der_set([digest_algorithm]) + encapsulated + tlv(0xA0, b"".join(certificates)) + signers
    return seq(oid(OIDS["signedData"]), tlv(0xA0, seq(body)))


def issuer_and_serial(certificate_der):
    """The issuer Name and serialNumber TLVs of a DER certificate."""
    def read(data, offset):
        length, header = data[offset + 1], 2
        if length & 0x80:
            count = length & 0x7F
            length = int.from_bytes(data[offset + 2:offset + 2 + count], "big")
            header += count
        return offset + header, offset + header + length  # content start, end

    cursor = read(certificate_der, 0)[0]      # inside Certificate
    cursor = read(certificate_der, cursor)[0]  # inside TBSCertificate
    if certificate_der[cursor] == 0xA0:
        cursor = read(certificate_der, cursor)[1]
    serial_end = read(certificate_der, cursor)[1]
    serial = certificate_der[cursor:serial_end]
    cursor = read(certificate_der, serial_end)[1]  # skip signature algorithm
    issuer_end = read(certificate_der, cursor)[1]
    return certificate_der[cursor:issuer_end], serial

# ----------------------------------------------------------------- signatures no library makes


def raw_rsa_signature(key, encoded_message):
    """EM^d mod n in k bytes: RSASP1 on an encoding chosen here (RFC 8017 §5.2.1)."""
    numbers = key.private_numbers()
    n = numbers.public_numbers.n
    return pow(int.from_bytes(encoded_message, "big"), numbers.d, n).to_bytes((n.bit_length() + 7) // 8, "big")


def pkcs1_encoded(digest_info, length):
    """EMSA-PKCS1-v1_5 (RFC 8017 §9.2) of a DigestInfo given whole."""
    return b"\x00\x01" + b"\xff" * (length - len(digest_info) - 3) + b"\x00" + digest_info


def odd_signature(variant, key, content):
    """The signature a signature variant puts in the receipt, or None when this content
    cannot carry it (the caller then varies the content and tries again)."""
    n = key.public_key().public_numbers().n
    length = (n.bit_length() + 7) // 8
    if variant == "digest-info-without-null":
        info = seq(seq(oid(OIDS["sha256"])), tlv(0x04, hashlib.sha256(content).digest()))
        return raw_rsa_signature(key, pkcs1_encoded(info, length))
    if variant == "sha1-digest-info":
        info = seq(seq(oid(OIDS["sha1"]), NULL), tlv(0x04, hashlib.sha1(content).digest()))
        return raw_rsa_signature(key, pkcs1_encoded(info, length))
    genuine = key.sign(content, padding.PKCS1v15(), HASHES["sha256"])
    if variant == "short-signature":
        return genuine[1:] if genuine[0] == 0 else None
    value = int.from_bytes(genuine, "big") + n  # "signature-plus-modulus": the same residue mod n
    return value.to_bytes(length, "big") if value.bit_length() <= 8 * length else None


SIGNATURE_VARIANTS = ("digest-info-without-null", "sha1-digest-info", "short-signature", "signature-plus-modulus")

# ----------------------------------------------------------------- variants

VARIANTS = {
    "valid": "nothing broken",
    "forged-chain": "a second CA with the same names and different keys signs it",
    "leaf-without-marker": "the leaf lacks 1.2.840.113635.100.6.11.1",
    "intermediate-without-marker": "the intermediate lacks 1.2.840.113635.100.6.2.1",
    "tampered-payload": "one payload byte (in the opaque value) changes after signing",
    "expired-at-creation": "the leaf expired a day before the creation date",
    "not-yet-valid-at-creation": "the leaf becomes valid a day after the creation date",
    "extra-certificate": "an unrelated self-signed certificate rides along",
    "missing-intermediate": "the intermediate is left out of the receipt",
    "signer-not-in-bag": "the signing certificate is left out of the receipt",
    "no-signers": "SignerInfos is empty",
    "unsupported-digest": "signed with SHA-512",
    "digest-info-without-null": "the RSA signature's DigestInfo names SHA-256 without NULL parameters",
    "sha1-digest-info": "the RSA signature's DigestInfo is SHA-1's while the SignerInfo names SHA-256",
    "short-signature": "the RSA signature without its leading zero octet (k - 1 bytes)",
    "signature-plus-modulus": "the RSA signature plus the modulus: the same value mod n, but not below n",
}


def mint(ca, spec, digest="sha256", ber=False, variant="valid"):
    if variant not in VARIANTS:
        raise SystemExit(f"unknown variant {variant}; one of: {', '.join(VARIANTS)}")
    created = datetime.datetime.strptime(spec["receipt_creation_date"][:19], "%Y-%m-%dT%H:%M:%S")
    leaf_options = {}
    if variant == "leaf-without-marker":
        leaf_options["markers"] = ()
    if variant == "expired-at-creation":
        leaf_options["valid"] = (created - datetime.timedelta(days=365), created - datetime.timedelta(days=1))
    if variant == "not-yet-valid-at-creation":
        leaf_options["valid"] = (created + datetime.timedelta(days=1), created + datetime.timedelta(days=365))
    if variant in ("forged-chain", "intermediate-without-marker"):
        import tempfile
        markers = () if variant == "intermediate-without-marker" else ("intermediateMarker",)
        forged = CA.create(tempfile.mkdtemp(prefix="forged-ca-"), intermediate_markers=markers)
        if variant == "intermediate-without-marker":  # same root, new intermediate without the marker
            forged.root_key, forged.root = ca.root_key, ca.root
            forged.intermediate = certificate(INTERMEDIATE_NAME, ROOT_NAME, forged.intermediate_key.public_key(),
                                              ca.root_key, 3, FAR_PAST, FAR_FUTURE, True, ())
        ca = forged
    leaf_key, leaf = ca.leaf(created, **leaf_options)
    content = payload(spec)
    certificates = [leaf, ca.intermediate, ca.root]
    if variant == "extra-certificate":
        stranger_key = new_key()
        certificates.append(certificate("Stranger", "Stranger", stranger_key.public_key(), stranger_key, 7,
                                        FAR_PAST, FAR_FUTURE, True, []))
    if variant == "missing-intermediate":
        certificates.remove(ca.intermediate)
    if variant == "signer-not-in-bag":
        certificates.remove(leaf)
    if variant == "unsupported-digest":
        digest = "sha512"
    signature = None
    if variant in SIGNATURE_VARIANTS:
        # A payload whose signature can carry the variant: about 1 in 2 for the modulus, 1 in 256 for the zero.
        for attempt in range(4096):
            varied = dict(spec, unknown=spec.get("unknown", []) + [{"type": 98, "hex": f"{attempt:08x}"}])
            content = payload(varied)
            signature = odd_signature(variant, leaf_key, content)
            if signature is not None:
                break
        else:
            raise SystemExit(f"no payload found that {variant} fits")
    receipt = signed_data(content, certificates, leaf_key, leaf, digest, ber, signer_present=variant != "no-signers",
                          signature=signature)
    if variant == "tampered-payload":
        index = receipt.index(bytes.fromhex(spec["opaque_hex"]))  # a byte no other check reads
        receipt = receipt[:index] + bytes([receipt[index] ^ 0x01]) + receipt[index + 1:]
    return receipt


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    ca_command = commands.add_parser("ca", help="create a test CA")
    ca_command.add_argument("directory")
    receipt_command = commands.add_parser("receipt", help="mint a receipt")
    receipt_command.add_argument("out")
    receipt_command.add_argument("--ca", required=True, help="a directory made by `ca`")
    receipt_command.add_argument("--spec", help="a JSON file of fields; defaults to example_spec()")
    receipt_command.add_argument("--purchases", type=int, help="add N example purchases")
    receipt_command.add_argument("--ber", action="store_true", help="indefinite lengths, as Xcode writes")
    receipt_command.add_argument("--digest", choices=["sha1", "sha256"], default="sha256")
    receipt_command.add_argument("--base64", action="store_true", help="write base64 text")
    receipt_command.add_argument("--variant", default="valid", help="; ".join(f"{k}: {v}" for k, v in VARIANTS.items()))
    args = parser.parse_args()

    if args.command == "ca":
        CA.create(args.directory)
        print(f"test CA in {args.directory}; trust it with --anchor {os.path.join(args.directory, 'root.pem')}")
        return 0
    spec = example_spec()
    if args.spec:
        with open(args.spec) as f:
            spec.update(json.load(f))
    if args.purchases is not None:
        spec["in_app"] = [example_purchase(i) for i in range(args.purchases)]
    receipt = mint(CA(args.ca), spec, args.digest, args.ber, args.variant)
    with open(args.out, "wb") as f:
        f.write(base64.encodebytes(receipt) if args.base64 else receipt)
    return 0


if __name__ == "__main__":
    sys.exit(main())
