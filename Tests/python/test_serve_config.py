"""`receipt serve --config FILE`: a YAML file whose keys stand for the flags. The file and the
flags make the same settings (`--print-config` shows them alike); every key docs/serve.md
documents is read; every error names the file, the line and the key."""
import json
import os
import pathlib
import re
import secrets
import subprocess

import pytest

from test_serve import CLI

ROOT = pathlib.Path(__file__).resolve().parents[2]


def serve(*arguments, cwd=None):
    return subprocess.run([CLI, "serve", *arguments], capture_output=True, text=True, timeout=60, cwd=cwd)


def secret_file(path, text):
    path.write_text(text)
    path.chmod(0o600)
    return path


@pytest.fixture
def files(tmp_path):
    secret_file(tmp_path / "read.token", secrets.token_urlsafe(24) + "\n")
    secret_file(tmp_path / "write.token", secrets.token_urlsafe(24) + "\n")
    secret_file(tmp_path / "hook.secret", "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" + "\n")
    return tmp_path


def test_a_file_and_the_flags_make_the_same_settings(files):
    flags = ["--host", "127.0.0.1", "--port", "0", "--store", str(files / "store.db"),
             "--read-token-file", str(files / "read.token"), "--write-token-file", str(files / "write.token"),
             "--bundle-id", "com.example.app", "--environment", "sandbox", "--app-apple-id", "42",
             "--webhook", "http://127.0.0.1:9/hook", "--webhook-secret-file", str(files / "hook.secret"),
             "--webhook-timeout", "7", "--revocation", "soft", "--max-connections", "99", "--event-retention-days", "3"]
    (files / "receipt.yaml").write_text("""\
listener:
  host: 127.0.0.1
  port: 0
  max_connections: 99
store:
  location: store.db   # relative: from this file's folder
  event_retention_days: 3
credentials:
  read_token_file: read.token
  write_token_file: write.token
webhook_delivery:
  timeout_seconds: 7
revocation:
  mode: soft
apps:
  - bundle_id: com.example.app
    environment: sandbox
    app_apple_id: 42
    webhooks:
      - url: http://127.0.0.1:9/hook
        secret_file: hook.secret
""")
    by_flags = serve(*flags, "--print-config")
    by_file = serve("--config", str(files / "receipt.yaml"), "--print-config", cwd="/")
    assert by_flags.returncode == 0, by_flags.stderr
    assert by_file.returncode == 0, by_file.stderr
    assert by_file.stdout == by_flags.stdout
    printed = dict(line.split(": ", 1) for line in by_file.stdout.splitlines())
    assert printed["store.location"] == str(files / "store.db")
    assert printed["revocation.mode"] == "soft" and printed["listener.max_connections"] == "99"
    assert printed["apps[0].environment"] == "sandbox" and printed["webhook_delivery.timeout_seconds"] == "7"
    # No secret shows: neither token nor the webhook's secret.
    for name in ("read.token", "write.token", "hook.secret"):
        assert (files / name).read_text().strip() not in by_file.stdout
    assert printed["credentials.read_tokens"] == "1 (not shown)"
    checked = serve("--config", str(files / "receipt.yaml"), "--check-config")
    assert checked.returncode == 0 and "configuration ok" in checked.stdout, checked.stderr


@pytest.mark.parametrize("text, where, says", [
    ("listener:\n  prot: 8080\n", ":2: listener:", "unknown key 'prot'"),
    ("listener:\n  port: \"8080\"\n", ":2: listener.port:", "must be a whole number"),
    ("listener:\n  port: 99999\n", ":2: listener.port:", "listener.port must be 0...65535"),
    ("logs:\n  access_log: yes\n", ":2: logs.access_log:", "must be true or false"),
    ("logs:\n  level: loud\n", ":2: logs.level:", "'loud' is invalid"),
    ("store:\n  location: s.db\ncredentials:\n  read_token_file: missing.token\n",
     ":4: credentials.read_token_file:", "cannot read"),
    ("apps:\n  - bundle_id: a.b\n  - bundle_id: c.d\n", ":2: apps:", "a server holds 1 for now"),
    ("apps:\n  - environment: production\n", ":2: apps[0]:", "needs the key bundle_id"),
    ("listener:\n  port: 1\n  port: 2\n", ":2:", "'port' given twice"),
    ("store:\n  location: s.db\n", ":2: store.location:", "give apps[0].bundle_id"),
    ("listener: [1\n", ":2: not YAML", "did not find expected"),
    ("", ":", "empty"),
])
def test_each_error_names_the_file_the_line_and_the_key(tmp_path, text, where, says):
    path = tmp_path / "receipt.yaml"
    path.write_text(text)
    result = serve("--config", str(path), "--check-config")
    assert result.returncode == 2, result.stdout
    assert str(path) + where in result.stderr and says in result.stderr, result.stderr


def test_flags_beside_a_file_are_refused(files):
    (files / "receipt.yaml").write_text("listener:\n  port: 0\n")
    result = serve("--config", str(files / "receipt.yaml"), "--port", "1", "--check-config")
    assert result.returncode == 2 and "--port is given with --config" in result.stderr, result.stderr


def documented_keys():
    section = (ROOT / "docs" / "serve.md").read_text().split("### The configuration file", 1)[1].split("\n### ", 1)[0]
    return re.findall(r"^\| `([a-z_.\[\]]+)` \|", section, re.M)


def nested(key, value):
    """`apps[].api.key_id` = value, as the file's mappings and lists (JSON is YAML)."""
    for part in reversed(key.split(".")):
        value = {part[:-2]: [value]} if part.endswith("[]") else {part: value}
    return value


def test_every_documented_key_is_read_with_its_type(tmp_path):
    keys = documented_keys()
    assert len(keys) >= 40
    for key in keys:
        path = tmp_path / "receipt.yaml"
        path.write_text(json.dumps(nested(key, {"not": "a value"})))
        result = serve("--config", str(path), "--check-config")
        shown = re.sub(r"\[\]", "[0]", key)
        assert result.returncode == 2 and f"{path}:1: {shown}: must be" in result.stderr, (key, result.stderr)


def test_the_example_reads(tmp_path):
    """dist/receipt.yaml's keys are the documented ones, and it is read up to its files."""
    text = (ROOT / "dist" / "receipt.yaml").read_text()
    documented = set(documented_keys())
    path = tmp_path / "receipt.yaml"
    path.write_text(text)
    result = serve("--config", str(path), "--check-config")
    # Its files are the operator's: the first one named is missing here, and said so.
    assert result.returncode == 2 and "read_token_file: cannot read" in result.stderr, result.stderr
    top = {line.split(":")[0] for line in text.splitlines() if re.match(r"^[a-z_]+:", line)}
    assert top <= {key.split(".")[0].removesuffix("[]") for key in documented}
