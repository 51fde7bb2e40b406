"""The helpers Apple's test files import from `tests.util`, which Apple's source distribution
does not ship (see README.md). Written for libreceipt's drop-in: signed data is signed with the
project's JWS test CA, and verifiers trust Apple's test CA and that one."""
import base64
import json
import os
import pathlib

from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier

import mint_jws

# The run's test CA (mint_jws.py ca), made by test_apple_suite.py before the run.
_CA = pathlib.Path(os.environ["APPLE_SUITE_CA"])


def read_data_from_file(path):
    with open(path, mode="r") as file:
        return file.read()


def read_data_from_binary_file(path):
    with open(path, mode="rb") as file:
        return file.read()


def create_signed_data_from_json(path):
    return mint_jws.sign(json.loads(read_data_from_file(path)), mint_jws.load_ca(str(_CA)))


def decode_json_from_signed_date(data):
    """Header and payload of a JWS, unverified, as Apple's helper gives them."""
    def segment(text):
        return json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    header, payload, _ = data.split(".")
    return {"header": segment(header), "payload": segment(payload)}


def _roots():
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding
    ours = x509.load_pem_x509_certificate((_CA / "root.pem").read_bytes()).public_bytes(Encoding.DER)
    return [read_data_from_binary_file("tests/resources/certs/testCA.der"), ours]


def get_signed_data_verifier(env, bundle_id, app_apple_id=1234):
    return SignedDataVerifier(_roots(), False, env, bundle_id, app_apple_id)


def get_default_signed_data_verifier():
    return get_signed_data_verifier(Environment.LOCAL_TESTING, "com.example")
