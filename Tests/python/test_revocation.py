"""Revocation (OCSP) of StoreKit 2 chains: a local `openssl ocsp` responder for the project's test
CA on loopback (good, revoked leaf, revoked intermediate, responder down), and answers made here
with `cryptography` for every way an answer can be wrong (never `good`), through Python and the
command line. No network."""
import datetime
import os
import random
import socket
import subprocess
import sys
import time

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509 import ocsp
from cryptography.x509.oid import ExtendedKeyUsageOID

from conftest import JWS_MINTER_DIR
from libreceipt import ReceiptError, Verifier

sys.path.insert(0, str(JWS_MINTER_DIR))
import mint_jws  # noqa: E402

CLI = os.environ.get("RECEIPT_CLI")
BUNDLE = "com.example.minted"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def responder_port():
    """A port free now below the ephemeral range (32768 and up on Linux), for an `openssl ocsp` responder, which
    binds it later and cannot be moved (its URL is in the certificates): a port the kernel picked for `port 0`
    could be given to another test's server (tests run two at a time) before the responder binds it."""
    while True:
        port = random.randrange(20_000, 32_000)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port


class CA:
    """A JWS test CA whose leaf and intermediate name OCSP responders on loopback."""

    def __init__(self, directory):
        self.directory = str(directory)
        ports = {responder_port()}
        while len(ports) < 2:
            ports.add(responder_port())
        self.urls = tuple(f"http://127.0.0.1:{port}" for port in sorted(ports))
        mint_jws.create_ca(self.directory, self.urls)
        self.root_pem = open(os.path.join(self.directory, "root.pem"), "rb").read()
        self.token = mint_jws.sign(mint_jws.example_payload(), mint_jws.load_ca(self.directory))
        ocsp_dir = os.path.join(self.directory, "ocsp")
        load = lambda name: open(os.path.join(ocsp_dir, name), "rb").read()  # noqa: E731
        self.root = x509.load_pem_x509_certificate(load("root.pem"))
        self.intermediate = x509.load_pem_x509_certificate(load("intermediate.pem"))
        self.leaf = x509.load_pem_x509_certificate(load("leaf.pem"))
        self.root_key = serialization.load_pem_private_key(load("root-key.pem"), None)
        self.intermediate_key = serialization.load_pem_private_key(load("intermediate-key.pem"), None)
        self.processes = []

    def verifier(self, mode, transport=None, timeout=2.0):
        return Verifier(bundle_id=BUNDLE, apple_root=False, anchors=[self.root_pem], revocation=mode,
                        ocsp_transport=transport, ocsp_timeout=timeout)

    def start_responders(self):
        """Both `openssl ocsp` responders, once each says it listens ("ACCEPT ..."): a probe
        connection would hold the single-threaded responder until it timed out."""
        for command in mint_jws.responder_commands(self.directory).values():
            process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            self.processes.append(process)
            line = process.stdout.readline()
            assert line.startswith("ACCEPT"), f"openssl ocsp did not start: {line!r}"

    def stop_responders(self):
        for process in self.processes:
            process.terminate()
            process.wait(timeout=10)
        self.processes = []

    def answer(self, cert, issuer, signer_key, status=ocsp.OCSPCertStatus.GOOD, this_update=None, next_update=None,
               responder=None, extra_certs=()):
        """A DER OCSP answer about `cert`, made here to be right or wrong in one way."""
        now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
        builder = ocsp.OCSPResponseBuilder().add_response(
            cert=cert, issuer=issuer, algorithm=hashes.SHA1(), cert_status=status,
            this_update=this_update or now - datetime.timedelta(minutes=1),
            next_update=next_update or now + datetime.timedelta(hours=1),
            revocation_time=now - datetime.timedelta(days=1) if status == ocsp.OCSPCertStatus.REVOKED else None,
            revocation_reason=x509.ReasonFlags.key_compromise if status == ocsp.OCSPCertStatus.REVOKED else None)
        builder = builder.responder_id(ocsp.OCSPResponderEncoding.HASH, responder or issuer)
        if extra_certs:
            builder = builder.certificates(list(extra_certs))
        return builder.sign(signer_key, hashes.SHA256()).public_bytes(serialization.Encoding.DER)

    def good_answers(self, **changes):
        """{url: answer} for the leaf (from the intermediate) and the intermediate (from the root)."""
        return {self.urls[0]: self.answer(self.leaf, self.intermediate, self.intermediate_key, **changes),
                self.urls[1]: self.answer(self.intermediate, self.root, self.root_key)}


class Recording:
    """An OCSP transport that answers from a table and records what was asked."""

    def __init__(self, answers, status=200):
        self.answers, self.status, self.asked = answers, status, []

    def __call__(self, url, body, timeout):
        self.asked.append(url)
        return self.status, self.answers[url]


@pytest.fixture
def ca(tmp_path):
    made = CA(tmp_path / "ca")
    yield made
    made.stop_responders()


def step(verification):
    return next(s for s in verification.steps if s.name == "revocation")


def test_a_good_chain_passes_every_mode_through_openssl_ocsp(ca):
    ca.start_responders()
    for mode in ("soft", "hard"):
        verification = ca.verifier(mode).verify_jws(ca.token)
        assert verification.valid, verification.to_json()
        assert (step(verification).outcome, step(verification).detail) == ("passed", "leaf and intermediate good (OCSP)")
    assert step(ca.verifier("off").verify_jws(ca.token)).outcome == "skipped"


@pytest.mark.parametrize("which", ["leaf", "intermediate"])
def test_a_revoked_certificate_fails_soft_and_hard(ca, which):
    mint_jws.revoke(ca.directory, which)
    ca.start_responders()
    for mode in ("soft", "hard"):
        verification = ca.verifier(mode).verify_jws(ca.token)
        assert not verification.valid
        assert verification.status_name == "RECEIPT_E_REVOKED"
        assert "revoked" in step(verification).detail


def test_responder_down_soft_passes_with_a_warning_hard_fails(ca):
    soft = ca.verifier("soft", timeout=1).verify_jws(ca.token)
    assert soft.valid and step(soft).outcome == "passed"
    assert step(soft).detail.startswith("warning:") and "no fresh OCSP answer" in step(soft).detail
    hard = ca.verifier("hard", timeout=1).verify_jws(ca.token)
    assert not hard.valid and hard.status_name == "RECEIPT_E_REVOCATION_UNKNOWN"


def test_the_cache_serves_until_next_update_then_asks_again(ca):
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    # nextUpdate 8 s ahead of a time cut to whole seconds: at least 7 s fresh, so that a loaded machine
    # (CI once took over 2 s here) still sees the first answer fresh.
    transport = Recording(ca.good_answers(next_update=now + datetime.timedelta(seconds=8)))
    verifier = ca.verifier("hard", transport)
    assert verifier.verify_jws(ca.token).valid
    assert sorted(transport.asked) == sorted(ca.urls)
    assert verifier.verify_jws(ca.token).valid
    assert len(transport.asked) == 2, "a fresh cached answer needs no request"
    time.sleep(9.5)
    transport.answers = ca.good_answers()  # the responder's next answer
    assert verifier.verify_jws(ca.token).valid
    assert transport.asked.count(ca.urls[0]) == 2, "the leaf's answer expired: asked again"


def other_signer():
    return ec.generate_private_key(ec.SECP256R1())


@pytest.mark.parametrize("wrong", ["wrong key", "another certificate", "stale", "from the future", "garbage",
                                   "HTTP 500", "delegated without OCSP signing", "not successful"])
def test_a_wrong_answer_never_counts_as_good(ca, wrong):
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    answers = ca.good_answers()
    status = 200
    if wrong == "wrong key":  # an impostor of the intermediate: its name, another key
        impostor_key = ec.generate_private_key(ec.SECP384R1())
        impostor = mint_jws.certificate("libreceipt JWS test root WWDR", "libreceipt JWS test root WWDR",
                                        impostor_key.public_key(), impostor_key, now - datetime.timedelta(days=1),
                                        now + datetime.timedelta(days=1), True)
        answers[ca.urls[0]] = ca.answer(ca.leaf, ca.intermediate, impostor_key, responder=impostor,
                                        extra_certs=[impostor])
    elif wrong == "another certificate":  # a good answer, about another leaf of the same issuer
        sibling = mint_jws.certificate("libreceipt JWS test root Receipt Signing", "libreceipt JWS test root WWDR",
                                       other_signer().public_key(), ca.intermediate_key,
                                       now - datetime.timedelta(days=1), now + datetime.timedelta(days=1), False)
        answers[ca.urls[0]] = ca.answer(sibling, ca.intermediate, ca.intermediate_key)
    elif wrong == "stale":
        answers[ca.urls[0]] = ca.answer(ca.leaf, ca.intermediate, ca.intermediate_key,
                                        this_update=now - datetime.timedelta(days=2),
                                        next_update=now - datetime.timedelta(days=1))
    elif wrong == "from the future":
        answers[ca.urls[0]] = ca.answer(ca.leaf, ca.intermediate, ca.intermediate_key,
                                        this_update=now + datetime.timedelta(hours=1),
                                        next_update=now + datetime.timedelta(hours=2))
    elif wrong == "garbage":
        answers[ca.urls[0]] = b"\x30\x03\x0a\x01\x00garbage"
    elif wrong == "HTTP 500":
        status = 500
    elif wrong == "delegated without OCSP signing":
        delegate_key = ec.generate_private_key(ec.SECP256R1())
        delegate = mint_jws.certificate("rogue responder", "libreceipt JWS test root WWDR", delegate_key.public_key(),
                                        ca.intermediate_key, now - datetime.timedelta(days=1),
                                        now + datetime.timedelta(days=1), False)
        answers[ca.urls[0]] = ca.answer(ca.leaf, ca.intermediate, delegate_key, responder=delegate,
                                        extra_certs=[delegate])
    elif wrong == "not successful":
        answers[ca.urls[0]] = ocsp.OCSPResponseBuilder.build_unsuccessful(
            ocsp.OCSPResponseStatus.TRY_LATER).public_bytes(serialization.Encoding.DER)
    transport = Recording(answers, status)
    verifier = ca.verifier("hard", transport)
    outcomes = dict(verifier.check_revocation(ca.token))
    assert outcomes[ca.urls[0]] != "accepted"
    assert ("HTTP 500" if status == 500 else "the OCSP answer") in outcomes[ca.urls[0]]
    verification = verifier.verify_jws(ca.token)
    assert not verification.valid and verification.status_name == "RECEIPT_E_REVOCATION_UNKNOWN", step(verification)


def der(tag, *contents):
    """One DER element (definite length) around `contents`."""
    body = b"".join(contents)
    size = len(body).to_bytes((len(body).bit_length() + 7) // 8 or 1, "big")
    return bytes([tag]) + (size if len(body) < 128 else bytes([0x80 | len(size)]) + size) + body


@pytest.mark.parametrize("certificates", ["1,200 copies of a real one", "5 that are not certificates"])
def test_an_answer_with_more_than_4_certificates_is_refused_before_any_is_decoded(ca, certificates):
    # OpenSSL decodes every certificate of an answer before it can be counted (half a
    # second for 2,000); the core counts them first by their headers. Five elements
    # that are no certificate at all show the count comes first: decoded, they would
    # make the answer "not a DER OCSPResponse".
    if certificates == "5 that are not certificates":
        basic = der(0x30, der(0x30), der(0x30), der(0x03, b"\x00"), der(0xA0, der(0x30, *[der(0x30)] * 5)))
        basic_oid = bytes.fromhex("06092b0601050507300101")  # id-pkix-ocsp-basic
        answer = der(0x30, der(0x0A, b"\x00"), der(0xA0, der(0x30, basic_oid, der(0x04, basic))))
    else:
        answer = ca.answer(ca.leaf, ca.intermediate, ca.intermediate_key, extra_certs=[ca.intermediate] * 1200)
    answers = ca.good_answers()
    answers[ca.urls[0]] = answer
    verifier = ca.verifier("hard", Recording(answers))
    outcomes = dict(verifier.check_revocation(ca.token))
    assert "carries more than 4 certificates" in outcomes[ca.urls[0]], outcomes
    assert verifier.verify_jws(ca.token).status_name == "RECEIPT_E_REVOCATION_UNKNOWN"


def test_a_delegated_responder_with_ocsp_signing_is_accepted(ca):
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    delegate_key = ec.generate_private_key(ec.SECP256R1())
    builder = (x509.CertificateBuilder().subject_name(mint_jws.name("OCSP responder"))
               .issuer_name(ca.intermediate.subject).public_key(delegate_key.public_key())
               .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
               .not_valid_after(now + datetime.timedelta(days=1))
               .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.OCSP_SIGNING]), critical=False)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.intermediate_key.public_key()),
                              critical=False))
    delegate = builder.sign(ca.intermediate_key, hashes.SHA256())
    answers = ca.good_answers()
    answers[ca.urls[0]] = ca.answer(ca.leaf, ca.intermediate, delegate_key, responder=delegate, extra_certs=[delegate])
    verification = ca.verifier("hard", Recording(answers)).verify_jws(ca.token)
    assert verification.valid, step(verification)


def test_no_query_for_an_untrusted_chain(ca):
    transport = Recording({})
    stranger = Verifier(bundle_id=BUNDLE, revocation="hard", ocsp_transport=transport)  # Apple's root only
    verification = stranger.verify_jws(ca.token)
    assert transport.asked == [], "a URL from a certificate nobody trusts is never fetched"
    assert not verification.valid and verification.status_name == "RECEIPT_E_CHAIN_UNTRUSTED"


@pytest.mark.skipif(not CLI, reason="RECEIPT_CLI is not set (run through `make test`)")
def test_the_command_line_asks_ocsp(ca, tmp_path):
    token = tmp_path / "t.jws"
    token.write_text(ca.token)
    root = os.path.join(ca.directory, "root.pem")
    arguments = [CLI, "verify", str(token), "--no-apple-root", "--anchor", root, "--bundle-id", BUNDLE,
                 "--ocsp-timeout", "2", "--revocation"]
    down = subprocess.run(arguments + ["hard"], capture_output=True, text=True, timeout=60)
    assert down.returncode == 1 and "RECEIPT_E_REVOCATION_UNKNOWN" in down.stdout
    ca.start_responders()
    good = subprocess.run(arguments + ["hard"], capture_output=True, text=True, timeout=60)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "leaf and intermediate good (OCSP)" in good.stdout


@pytest.mark.skipif(not CLI, reason="RECEIPT_CLI is not set (run through `make test`)")
def test_receipt_serve_asks_caches_refreshes_and_counts(ca):
    from test_serve import Server
    ca.start_responders()
    root = os.path.join(ca.directory, "root.pem")
    server = Server("--no-apple-root", "--anchor", root, "--bundle-id", BUNDLE, "--revocation", "hard",
                    "--ocsp-timeout", "2", "--ocsp-refresh-interval", "1", "--ocsp-refresh-before", "3600")
    try:
        status, answer = server.json("POST", "/v1/verify", ca.token)
        assert status == 200 and answer["valid"], answer
        revocation = next(step for step in answer["steps"] if step["step"] == "revocation")
        assert revocation["detail"] == "leaf and intermediate good (OCSP)"

        def count(text, outcome, reason):
            line = f'receipt_revocation_answers_total{{outcome="{outcome}",reason="{reason}"}}'
            return sum(float(row.split()[-1]) for row in text.splitlines() if row.startswith(line))

        metrics = server.request("GET", "/metrics")[1].decode()
        assert count(metrics, "good", "request") == 2
        # Answers that expire within --ocsp-refresh-before are asked again in the background,
        # with no request waiting: the responders still answer good.
        deadline = time.time() + 20
        while count(metrics, "good", "refresh") < 2 and time.time() < deadline:
            time.sleep(0.5)
            metrics = server.request("GET", "/metrics")[1].decode()
        assert count(metrics, "good", "refresh") >= 2, metrics
        # The cache serves a second request, with the responders gone.
        ca.stop_responders()
        status, answer = server.json("POST", "/v1/verify", ca.token)
        assert answer["valid"], answer
        metrics = server.request("GET", "/metrics")[1].decode()
        assert count(metrics, "good", "request") == 2, "a warm request asked OCSP"
        assert "receipt_revocation_cache_hits_total" in metrics
    finally:
        assert server.stop() == 0


@pytest.mark.parametrize("revoked", [False, True])
def test_receipt_serve_asks_ocsp_for_a_notification_in_hard_mode(ca, tmp_path, revoked):
    """A notification's chain with no cached answer is asked about before it is stored: good,
    stored (200); the leaf revoked, refused (400) and nothing stored, so that Apple sends it again."""
    from test_serve import Server
    if revoked:
        mint_jws.revoke(ca.directory, "leaf")
    ca.start_responders()
    story = mint_jws.notification_story(bundle_id=BUNDLE)
    body = mint_jws.sign_notification(story[0][1], mint_jws.load_ca(ca.directory))
    server = Server("--no-apple-root", "--anchor", os.path.join(ca.directory, "root.pem"), "--bundle-id", BUNDLE,
                    "--revocation", "hard", "--ocsp-timeout", "2", "--store", tmp_path / "store.db",
                    "--environment", "sandbox")
    try:
        status, answer = server.json("POST", "/notifications/v2", body)
        metrics = server.request("GET", "/metrics")[1].decode()
    finally:
        assert server.stop() == 0
    if revoked:
        assert status == 400 and answer["status"] == "RECEIPT_E_REVOKED", answer
    else:
        assert status == 200 and answer["stored"] is True, answer
        assert 'outcome="good",reason="notification"' in metrics
