"""dist/: the systemd unit and its environment file, as an operator installs them. The unit
passes `systemd-analyze verify` (with the built binary in place of /usr/local/bin/receipt),
every variable it expands is set by the environment file or by systemd, and the command it runs
is a configuration `receipt serve --check-config` accepts."""
import os
import pathlib
import re
import shutil
import subprocess

import pytest

from test_serve import CLI

DIST = pathlib.Path(__file__).resolve().parents[2] / "dist"


def environment_file():
    return dict(line.split("=", 1) for line in (DIST / "receipt-serve.env").read_text().splitlines()
                if line and not line.startswith("#"))


def test_the_unit_verifies(tmp_path):
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed")
    unit = tmp_path / "receipt-serve.service"
    unit.write_text((DIST / "receipt-serve.service").read_text().replace("/usr/local/bin/receipt", CLI))
    result = subprocess.run(["systemd-analyze", "verify", "--man=no", str(unit)], capture_output=True, text=True,
                            timeout=60)
    # Unknown keys are only warned about: any output at all fails.
    assert result.returncode == 0 and not (result.stdout + result.stderr).strip(), result.stdout + result.stderr


def test_the_command_it_runs_is_a_configuration_serve_accepts(tmp_path):
    text = (DIST / "receipt-serve.service").read_text()
    command = re.search(r"^ExecStart=(.*?)(?<!\\)$", text, re.M | re.S).group(1).replace("\\\n", " ")
    values = dict(environment_file(), CREDENTIALS_DIRECTORY=str(tmp_path))
    used = set(re.findall(r"\$\{(\w+)\}", command))
    assert used <= set(values), used - set(values)  # every variable is the environment file's or systemd's
    for name in ("read-tokens", "shared-secrets"):
        (tmp_path / name).write_text("a-secret\n")
    subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out",
                    str(tmp_path / "api-key")], check=True, capture_output=True)
    arguments = re.sub(r"\$\{(\w+)\}", lambda match: values[match.group(1)], command).split()
    arguments = [CLI if argument == "/usr/local/bin/receipt" else argument for argument in arguments]
    arguments = [str(tmp_path / "store.db") if argument == "/var/lib/receipt-serve/store.db" else argument
                 for argument in arguments]
    # EnvironmentFile= also puts its variables in the process's environment (APPSTORE_KEY_ID, ...).
    result = subprocess.run(arguments + ["--check-config"], capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, **environment_file()))
    assert result.returncode == 0 and "configuration ok" in result.stdout, result.stdout + result.stderr

