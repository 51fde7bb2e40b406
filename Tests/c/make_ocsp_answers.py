#!/usr/bin/env python3
"""Canned OCSP answers for the C tests of the revocation loop (no responder, no I/O):
    make_ocsp_answers.py DIR
DIR holds a JWS test CA made with `mint_jws.py ca DIR --ocsp-url … --intermediate-ocsp-url …`;
writes DIR/leaf-good.der, DIR/intermediate-good.der and DIR/leaf-revoked.der, each valid
for 30 days, signed by the issuer of the certificate they speak of."""
import datetime
import os
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509 import ocsp

directory = sys.argv[1]
read = lambda name: open(os.path.join(directory, "ocsp", name), "rb").read()  # noqa: E731
root, intermediate, leaf = (x509.load_pem_x509_certificate(read(f"{n}.pem")) for n in ("root", "intermediate", "leaf"))
root_key, intermediate_key = (serialization.load_pem_private_key(read(f"{n}-key.pem"), None)
                              for n in ("root", "intermediate"))
now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
for name, cert, issuer, key, status in (("leaf-good", leaf, intermediate, intermediate_key, ocsp.OCSPCertStatus.GOOD),
                                        ("intermediate-good", intermediate, root, root_key, ocsp.OCSPCertStatus.GOOD),
                                        ("leaf-revoked", leaf, intermediate, intermediate_key,
                                         ocsp.OCSPCertStatus.REVOKED)):
    revoked = status == ocsp.OCSPCertStatus.REVOKED
    builder = ocsp.OCSPResponseBuilder().add_response(
        cert=cert, issuer=issuer, algorithm=hashes.SHA1(), cert_status=status,
        this_update=now - datetime.timedelta(minutes=5), next_update=now + datetime.timedelta(days=30),
        revocation_time=now - datetime.timedelta(days=1) if revoked else None,
        revocation_reason=x509.ReasonFlags.key_compromise if revoked else None).responder_id(
        ocsp.OCSPResponderEncoding.HASH, issuer)
    with open(os.path.join(directory, f"{name}.der"), "wb") as out:
        out.write(builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.DER))
