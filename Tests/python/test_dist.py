"""dist/: the systemd unit and its environment file, as an operator installs them. The unit
passes `systemd-analyze verify` (with the built binary in place of /usr/local/bin/receipt),
every variable it expands is set by the environment file or by systemd, and the command it runs
is a configuration `receipt serve --check-config` accepts."""
import os
import pathlib
import re
import shlex
import shutil
import signal
import subprocess
import urllib.request

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


def unit_command(directory, **overrides):
    """The unit's ExecStart as systemd runs it: the environment file's values (and `overrides`) in
    place of its variables, the credentials (made up) in `directory`, the built binary for the
    installed one and the store in `directory`."""
    text = (DIST / "receipt-serve.service").read_text()
    command = re.search(r"^ExecStart=(.*?)(?<!\\)$", text, re.M | re.S).group(1).replace("\\\n", " ")
    values = dict(environment_file(), CREDENTIALS_DIRECTORY=str(directory), **overrides)
    used = set(re.findall(r"\$\{(\w+)\}", command))
    assert used <= set(values), used - set(values)  # every variable is the environment file's or systemd's
    for name in ("read-tokens", "shared-secrets"):
        (directory / name).write_text(f"a-{name}-secret-of-enough-length\n")
        (directory / name).chmod(0o400)  # as systemd lays out a credential: the service's alone
    subprocess.run(["openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out",
                    str(directory / "api-key")], check=True, capture_output=True)
    arguments = re.sub(r"\$\{(\w+)\}", lambda match: values[match.group(1)], command).split()
    arguments = [CLI if argument == "/usr/local/bin/receipt" else argument for argument in arguments]
    return [str(directory / "store.db") if argument == "/var/lib/receipt-serve/store.db" else argument
            for argument in arguments]


def test_the_command_it_runs_is_a_configuration_serve_accepts(tmp_path):
    # EnvironmentFile= also puts its variables in the process's environment (APPSTORE_KEY_ID, ...).
    result = subprocess.run(unit_command(tmp_path) + ["--check-config"], capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, **environment_file()))
    assert result.returncode == 0 and "configuration ok" in result.stdout, result.stdout + result.stderr


def toolchain_libraries():
    """The directory of the Swift runtime libraries of the toolchain on PATH (/opt/swift/usr/lib
    here), which a server that runs `receipt` does not have."""
    swift = shutil.which("swift")
    if swift is None:
        pytest.skip("no Swift toolchain on PATH: nothing to hide")
    return pathlib.Path(os.path.realpath(swift)).parents[1] / "lib"


def test_receipt_loads_nothing_from_the_toolchain():
    """`receipt` carries the Swift runtime and Foundation (Package.swift's deployableLinkerFlags):
    every library it loads is the system's."""
    libraries = toolchain_libraries()
    result = subprocess.run(["ldd", CLI], capture_output=True, text=True, timeout=60, check=True)
    assert "not found" not in result.stdout, result.stdout
    assert str(libraries) not in result.stdout, result.stdout


def test_the_unit_serves_with_the_toolchain_hidden(tmp_path):
    """What `make install` copies to a server runs there: the unit's command, with the toolchain's
    libraries hidden under an empty tmpfs (a mount namespace of its own), starts, makes its store,
    answers /healthz and /readyz, runs Swift concurrency on its event loops (SwiftNIO finds the
    statically linked runtime's hook) and stops on SIGTERM with 0."""
    libraries = toolchain_libraries()
    hide = f"mount -t tmpfs none {shlex.quote(str(libraries))}"
    if subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", hide],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount in a namespace of its own here (needs CAP_SYS_ADMIN): ldd's check stands alone")
    arguments = unit_command(tmp_path, RECEIPT_PORT="0") + ["--log-level", "debug"]
    script = f"{hide} && exec {shlex.join(arguments)}"
    server = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=dict(os.environ, **environment_file()))
    try:
        line = server.stdout.readline()
        assert line.startswith("listening on 127.0.0.1:"), line + server.stderr.read()
        base = "http://127.0.0.1:" + line.strip().rsplit(":", 1)[1]
        for path in ("/healthz", "/readyz"):
            with urllib.request.urlopen(base + path, timeout=30) as answer:
                assert answer.status == 200, path
        assert (tmp_path / "store.db").exists()
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=30) == 0
        log = server.stderr.read()
        assert "Swift concurrency runs on the server's event loops" in log, log
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
