"""The `receipt` command-line tool: exit codes, stdout and stderr."""
import json
import os
import subprocess

import pytest

CLI = os.environ.get("RECEIPT_CLI")
pytestmark = pytest.mark.skipif(not CLI, reason="RECEIPT_CLI is not set (run through `make test`)")


def run(*args, stdin=None):
    return subprocess.run([CLI, *map(str, args)], input=stdin, capture_output=True)


def test_inspect_prints_the_receipt_json(minted):
    result = run("inspect", minted["der"])
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["bundle_id"] == "com.example.minted"
    assert len(document["in_app"]) == 3


def test_inspect_reads_base64_from_stdin(minted):
    result = run("inspect", "-", stdin=minted["b64"].read_bytes())
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["bundle_id"] == "com.example.minted"


def test_inspect_bad_input_exits_2_with_status_on_stderr(tmp_path):
    bad = tmp_path / "bad.der"
    bad.write_bytes(b"\x30\x84\xff\xff\xff\xff")
    result = run("inspect", bad)
    assert result.returncode == 2
    assert result.stdout == b""
    assert b"RECEIPT_E_LENGTH_OVERFLOW" in result.stderr


def test_inspect_missing_file_exits_2(tmp_path):
    result = run("inspect", tmp_path / "nope.der")
    assert result.returncode == 2
    assert b"cannot open" in result.stderr


def test_verify_exit_codes(mint, test_ca):
    anchor = test_ca / "root.pem"
    valid = run("verify", mint(), "--anchor", anchor, "--no-apple-root", "--bundle-id", "com.example.minted")
    assert valid.returncode == 0, valid.stdout + valid.stderr
    assert b"VALID" in valid.stdout
    invalid = run("verify", mint(), "--anchor", anchor, "--bundle-id", "com.example.other", "--json")
    assert invalid.returncode == 1
    document = json.loads(invalid.stdout)
    assert document["valid"] is False and document["status"] == "RECEIPT_E_BUNDLE_MISMATCH"
    untrusted = run("verify", mint())
    assert untrusted.returncode == 1
    assert b"RECEIPT_E_CHAIN_UNTRUSTED" in untrusted.stdout


def test_verify_unusable_arguments_exit_2(mint, tmp_path):
    assert run("verify", mint(), "--device-id", "zz").returncode == 2
    assert run("verify", mint(), "--now", "yesterday").returncode == 2
    bad_anchor = tmp_path / "anchor.pem"
    bad_anchor.write_text("nope")
    result = run("verify", mint(), "--anchor", bad_anchor)
    assert result.returncode == 2 and b"RECEIPT_E_BAD_ANCHOR" in result.stderr
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    assert run("verify", empty).returncode == 2


def test_bench_json_prints_one_object_per_receipt(mint, test_ca):
    """The interface others compare with: file as given, medians in ns. Values are only
    checked to be positive times: speed is shown by `make bench`, never asserted."""
    first, second = mint("--purchases", "2"), mint("--ber")
    result = run("bench", first, second, "--json", "--samples", "1", "--anchor", test_ca / "root.pem")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode().splitlines()
    assert [json.loads(line)["file"] for line in lines] == [str(first), str(second)]
    for line in lines:
        figures = json.loads(line)
        for key in ("parse", "verify_cold", "verify_warm", "parse_verify_cold", "parse_verify_warm"):
            assert isinstance(figures[key], int) and figures[key] > 0, key
    unverifiable = run("bench", first, "--json", "--samples", "1")
    assert unverifiable.returncode == 1 and b"does not verify" in unverifiable.stderr
