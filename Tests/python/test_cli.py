"""The `receipt` command-line tool: exit codes, stdout and stderr."""
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import der_tree  # noqa: E402  (tools/der_tree.py)

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
    first, second = mint("--purchases", "2"), mint("--digest", "sha1")
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


# A child's peak RSS counts the memory of the process it was forked from, so the CLI
# is started from a fresh, small interpreter rather than from pytest.
MEASURE = """
import os, sys
pid = os.fork()
if pid == 0:
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss * 1024)
"""


def run_measured(*args):
    """(exit status, peak RSS in bytes) of one CLI run."""
    out = subprocess.run([sys.executable, "-S", "-c", MEASURE, CLI, *map(str, args)], capture_output=True, check=True)
    status, peak = out.stdout.split()
    return int(status), int(peak)


def test_padded_and_duplicated_certificates_are_refused_cheaply(shared, tmp_path):
    """8 MB of certificates padding a real receipt: refused before any is decoded, in
    bounded memory (the attack cost 23 s and 811 MB before the limit)."""
    genuine = (shared / "receipts" / "tp__receipt-production.der").read_bytes()
    assert run("verify", shared / "receipts" / "tp__receipt-production.der").returncode == 0
    padded = tmp_path / "padded.der"
    padded.write_bytes(der_tree.padded_with_certificates(genuine, (8 << 20) + 4096))
    assert padded.stat().st_size > 8 << 20
    status, peak = run_measured("verify", padded)
    assert status == 1
    assert peak < 64 << 20, f"peak RSS {peak} bytes"
    result = run("verify", padded, "--json")
    assert json.loads(result.stdout)["status"] == "RECEIPT_E_TOO_MANY_CERTIFICATES"
    duplicated = tmp_path / "duplicated.der"
    duplicated.write_bytes(der_tree.with_certificates(genuine, lambda certs: certs + [certs[0]]))
    result = run("verify", duplicated, "--json")
    assert result.returncode == 1
    assert json.loads(result.stdout)["status"] == "RECEIPT_E_DUPLICATE_CERTIFICATE"


def test_verify_environment_and_offset_times(shared):
    production = shared / "receipts" / "tp__receipt-production.der"
    sandbox = shared / "receipts" / "rc__receiptsample1.der"
    assert run("verify", production, "--environment", "production").returncode == 0
    assert run("verify", sandbox, "--environment", "sandbox").returncode == 0
    result = run("verify", production, "--environment", "sandbox", "--json")
    assert result.returncode == 1
    assert json.loads(result.stdout)["status"] == "RECEIPT_E_ENVIRONMENT_MISMATCH"
    assert run("verify", production, "--now", "2024-01-01T01:00:00+01:00").returncode == 0
    assert run("verify", production, "--now", "2024-01-01T01:00:00").returncode == 2


@pytest.mark.parametrize("args", [("verify", "{der}", "--bogus"), ("verify",), ("entitlements", "{der}"),
                                  ("inspect", "{der}", "--environment", "staging"), ("nosuchcommand",)])
def test_usage_errors_exit_2(minted, args):
    result = run(*[a.format(der=minted["der"]) for a in args])
    assert result.returncode == 2, result.stderr
    assert b"Error" in result.stderr or b"error" in result.stderr


def built_version():
    """What `receipt --version` says: (version, commit)."""
    result = run("--version")
    assert result.returncode == 0, result.stderr
    match = re.fullmatch(r"(\d+\.\d+\.\d+) \(commit ([0-9a-f]{40}(?:-modified)?|unknown)\)", result.stdout.decode().strip())
    assert match, result.stdout
    return match.group(1), match.group(2)


def test_version_names_the_release_and_the_commit_built_from():
    version, commit = built_version()
    header = (ROOT / "Include" / "receipt.h").read_text()
    assert f'#define RECEIPT_VERSION_STRING "{version}"' in header
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode != 0:
        pytest.skip("not a git checkout: the build was not stamped")
    # `make` stamps the commit; a build the tests were given from elsewhere would say another.
    assert commit.removesuffix("-modified") == head.stdout.strip()


def test_version_and_help():
    for command in ("", "inspect", "verify", "entitlements", "appstore-verify", "bench"):
        text = run(*([command] if command else []), "--help").stdout.decode()
        for line in text.splitlines():
            assert "   " not in line.strip() or line.startswith("  "), f"{command} --help: {line!r}"
            words = line.strip()
            # runs of spaces only align columns, never inside a sentence
            assert not any(a.isalpha() and b.isalpha() for a, b in
                           [(words[i - 1], words[i + 3]) for i in range(1, len(words) - 3) if words[i:i + 3] == "   "])


def test_errors_name_the_file_at_fault(minted):
    result = run("verify", minted["der"], "--anchor", "/nonexistent/anchor.pem")
    assert result.returncode == 2
    assert b"/nonexistent/anchor.pem" in result.stderr
    assert str(minted["der"]).encode() not in result.stderr
    result = run("entitlements", minted["der"], "--at", "2024-01-01T00:00:00Z", "--unverified",
                 "--catalog", "/nonexistent/catalog.json")
    assert result.returncode == 2
    assert b"/nonexistent/catalog.json" in result.stderr


def test_appstore_json_of_junk_prints_21002_and_exits_2(tmp_path):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(bytes(range(1, 200)))
    result = run("inspect", "--appstore-json", junk)
    assert result.returncode == 2
    assert json.loads(result.stdout)["status"] == 21002
    assert b"RECEIPT_E_" in result.stderr


def test_xcode_receipts_hint_at_allow_xcode(shared):
    result = run("verify", shared / "receipts" / "tp__receipt-xcode.der")
    assert result.returncode == 1
    assert b"--allow-xcode" in result.stdout
    assert run("verify", shared / "receipts" / "tp__receipt-xcode.der", "--allow-xcode").returncode == 0
