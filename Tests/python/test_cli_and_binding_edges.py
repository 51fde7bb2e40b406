"""What a newcomer met on day one (issue: newcomer and Spark fixes): CLI edges, binding edges,
tools that say what they made. Each test fails on the build before its fix."""
import base64
import datetime
import json
import os
import re
import socket
import subprocess
import sys

import pytest

import libreceipt
from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import mint_jws  # noqa: E402

CLI = os.environ.get("RECEIPT_CLI", str(ROOT / "build" / "bin" / "receipt"))


def run(*args, stdin=None):
    return subprocess.run([CLI, *map(str, args)], input=stdin, capture_output=True, text=True)


# ---------------------------------------------------------------- the command line

def test_no_arguments_is_a_usage_error():
    result = run()
    assert result.returncode == 2 and result.stdout == ""
    assert "USAGE: receipt <subcommand>" in result.stderr


def test_no_apple_root_without_an_anchor_is_a_usage_error(minted):
    result = run("verify", minted["der"], "--no-apple-root")
    assert result.returncode == 2
    assert "--no-apple-root leaves nothing to trust" in result.stderr


def test_serve_on_a_taken_port_names_it_and_exits_2():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run([CLI, "serve", "--port", str(port)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 2, result.stderr
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in result.stderr
    assert "bind(descriptor" not in result.stderr


def test_serve_on_a_host_that_is_no_address_names_it_and_exits_2():
    result = subprocess.run([CLI, "serve", "--host", "999.1.1.1", "--port", "0"], capture_output=True, text=True,
                            timeout=30)
    assert result.returncode == 2, result.stderr
    assert "cannot listen on 999.1.1.1:0: 999.1.1.1 is neither an IP address nor a host name" in result.stderr
    assert "SocketAddressError" not in result.stderr


def test_serve_help_gives_one_default_for_workers():
    text = run("serve", "--help").stdout
    workers = text[text.index("--workers"):text.index("--max-connections")]
    assert workers.count("default") == 1, workers


#: The groups `receipt serve --help` sorts its options into (#59: help that reads), and one option of each.
SERVE_HELP_GROUPS = {
    "Listener": "--port", "The app": "--bundle-id", "Trust": "--anchor", "Store": "--store-password-file",
    "Credentials": "--read-token-file", "App Store Server API": "--api-private-key-file", "Webhooks": "--webhook",
    "Retention Messaging": "--retention-rules", "Refund consumption answers": "--consumption-policy",
    "Revocation": "--ocsp-timeout", "Logs": "--log-format",
}


def test_serve_help_groups_its_options_and_names_every_route():
    text = run("serve", "--help").stdout
    heading = {title: text.find(f"\n{title.upper()}:\n") for title in SERVE_HELP_GROUPS}
    assert all(at > 0 for at in heading.values()), heading
    order = sorted(SERVE_HELP_GROUPS, key=heading.get)
    for title, option in SERVE_HELP_GROUPS.items():
        # Each option is listed under its group's heading, before the next group's.
        following = [heading[other] for other in order if heading[other] > heading[title]]
        assert heading[title] < text.index(f"  {option} ") < min(following or [len(text)]), (title, option)
    routes = text[text.index("Routes ("):]
    for path in ("/verifyReceipt", "/sandbox/verifyReceipt", "/v1/verify", "/v1/subscriptions/", "/v1/entitlements",
                 "/v1/consent/", "/v1/consumption/", "/v1/events", "/v1/stats/", "/dashboard", "/healthz", "/readyz",
                 "/metrics", "--notifications-path", "--retention-path"):
        assert path in " ".join(routes.split()), path


def test_inspect_takes_json_as_verify_does(minted):
    result = run("inspect", minted["der"], "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["bundle_id"] == "com.example.minted"


def test_verify_without_a_bundle_id_says_the_bundle_was_not_checked(minted, test_ca):
    trust = ("--anchor", test_ca / "root.pem", "--no-apple-root")
    lines = run("verify", minted["der"], *trust).stdout.splitlines()
    assert lines[-1] == "VALID" and "the bundle id was not checked" in lines[-2]
    lines = run("verify", minted["der"], *trust, "--bundle-id", "com.example.minted").stdout.splitlines()
    assert lines[-1] == "VALID" and not any("not checked" in line for line in lines)


def test_a_jws_with_a_typo_gets_a_jws_error_at_its_byte(jws_ca, tmp_path):
    root, chains = jws_ca
    token = mint_jws.sign(mint_jws.example_payload(), chains)
    for typo in "+!":
        at = len(token) // 2
        path = tmp_path / "typo.jws"
        path.write_text(token[:at] + typo + token[at + 1:])
        result = run("verify", path, "--anchor", root, "--no-apple-root")
        assert result.returncode == 2
        assert "RECEIPT_E_BAD_BASE64URL" in result.stderr and f"(at byte {at})" in result.stderr, result.stderr


@pytest.mark.parametrize("wrap, says", [
    (lambda token, der: json.dumps({"signedPayload": token}), "body: pass its signedPayload member"),
    (lambda token, der: json.dumps({"receipt-data": base64.b64encode(der).decode()}), "a verifyReceipt request: POST it"),
    (lambda token, der: json.dumps({"signedTransactionInfo": token}), "an App Store Server API answer"),
    (lambda token, der: "Bearer " + token, "remove \"Bearer \""),
    (lambda token, der: json.dumps(token), "remove the quotes"),
    (lambda token, der: json.dumps(base64.b64encode(der).decode()), "remove the quotes"),
])
def test_a_wrapper_handed_over_instead_of_signed_data_is_named(jws_ca, minted, tmp_path, wrap, says):
    root, chains = jws_ca
    path = tmp_path / "input.txt"
    path.write_text(wrap(mint_jws.sign(mint_jws.example_payload(), chains), minted["der"].read_bytes()))
    result = run("verify", path, "--anchor", root, "--no-apple-root")
    assert result.returncode == 2 and says in result.stderr, result.stderr


def test_a_text_file_is_neither_a_receipt_nor_a_jws(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("These are my notes, not a receipt.\n")
    result = run("inspect", path)
    assert result.returncode == 2
    assert "neither a receipt (DER, or base64) nor a JWS" in result.stderr and "quantum" not in result.stderr


def test_entitlements_take_the_transaction_a_notification_carries(jws_ca, tmp_path):
    root, chains = jws_ca
    transaction = mint_jws.example_payload()
    notification = mint_jws.example_payload("notification")
    notification["data"]["signedTransactionInfo"] = mint_jws.sign(transaction, chains)
    path = tmp_path / "notification.jws"
    path.write_text(mint_jws.sign(notification, chains))
    at = datetime.datetime.fromtimestamp(transaction["signedDate"] / 1000, datetime.timezone.utc)
    at = at.strftime("%Y-%m-%dT%H:%M:%SZ")  # inside the subscription's period
    result = run("entitlements", path, "--at", at, "--anchor", root, "--no-apple-root", "--compact")
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.strip().splitlines()) == 1  # --compact: one line
    assert transaction["productId"] in result.stdout


def test_entitlement_errors_name_the_file(jws_ca, tmp_path):
    root, chains = jws_ca
    path = tmp_path / "tampered-transaction.jws"
    path.write_text(mint_jws.sign(mint_jws.example_payload(), chains, "payload-changed"))
    result = run("entitlements", path, "--at", "2030-01-01T00:00:00Z", "--anchor", root, "--no-apple-root")
    assert result.returncode == 1
    assert str(path) in result.stderr and "signed transaction 0" not in result.stderr, result.stderr


def test_mint_jws_ca_says_what_it_made(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "mint_jws.py"), "ca", str(tmp_path / "ca")],
                            capture_output=True, text=True, check=True)
    assert str(tmp_path / "ca" / "root.pem") in result.stdout


# ---------------------------------------------------------------- the Python binding

def test_a_failed_jws_offers_its_payload_only_by_name(jws_ca):
    root, chains = jws_ca
    verifier = libreceipt.Verifier(anchors=[root.read_bytes()], apple_root=False)
    good = verifier.verify_jws(mint_jws.sign(mint_jws.example_payload(), chains))
    assert good.valid and good.payload["productId"] == good.unverified_payload["productId"]
    bad = verifier.verify_jws(mint_jws.sign(mint_jws.example_payload(), chains, "payload-changed"))
    assert not bad.valid
    with pytest.raises(libreceipt.ReceiptError) as raised:
        bad.payload
    assert raised.value.name == "RECEIPT_E_SIGNATURE_INVALID" and "unverified_payload" in raised.value.detail
    assert bad.unverified_payload["bundleId"] == "com.attacker"


def test_the_binding_has_a_version():
    assert re.fullmatch(r"\d+\.\d+\.\d+", libreceipt.__version__)
    assert libreceipt.__version__ == libreceipt.library_version()
    pyproject = (ROOT / "bindings" / "python" / "pyproject.toml").read_text()
    assert f'version = "{libreceipt.__version__}"' in pyproject


def test_install_venv_is_quiet_when_everything_is_there(tmp_path):
    venv = ROOT / "build" / "venv"
    if not (venv / "bin" / "python3").exists():
        pytest.skip("no build/venv")
    result = subprocess.run([str(ROOT / "scripts" / "install-venv.sh"), str(venv), "pandas<3"],
                            capture_output=True, text=True, check=True)
    assert "installing" not in result.stdout, result.stdout
