"""dist/: the systemd unit, its environment file and the configuration it runs, as an operator
installs them (or the Debian package does: Tests/deb). The unit passes `systemd-analyze verify`
(with the built binary in place of /usr/bin/receipt), the environment file sets only variables,
and the command it runs, with dist/receipt.yaml and the token files the package makes beside it,
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
INSTALLED = "/usr/bin/receipt"
CONFIG = "/etc/receipt/receipt.yaml"


def environment_file():
    return dict(line.split("=", 1) for line in (DIST / "receipt-serve.env").read_text().splitlines()
                if line and not line.startswith("#"))


def test_the_unit_verifies(tmp_path):
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed")
    unit = tmp_path / "receipt-serve.service"
    unit.write_text((DIST / "receipt-serve.service").read_text().replace(INSTALLED, CLI))
    result = subprocess.run(["systemd-analyze", "verify", "--man=no", str(unit)], capture_output=True, text=True,
                            timeout=60)
    # Unknown keys are only warned about: any output at all fails.
    assert result.returncode == 0 and not (result.stdout + result.stderr).strip(), result.stdout + result.stderr


def unit_command(directory, port=None):
    """The unit's ExecStart as systemd runs it, with the built binary for the installed one and
    dist/receipt.yaml laid out in `directory` as the package lays it out in /etc/receipt: the
    token files beside it (the owner's alone), the store in `directory`."""
    text = (DIST / "receipt-serve.service").read_text()
    command = re.search(r"^ExecStart=(.*?)(?<!\\)$", text, re.M | re.S).group(1).replace("\\\n", " ")
    assert "$" not in command, command  # the environment file is optional: nothing of it in the command
    config = (DIST / "receipt.yaml").read_text().replace("/var/lib/receipt/store.db", str(directory / "store.db"))
    if port is not None:  # served by the test: any free port, and the debug lines it reads
        config = config.replace("port: 8080", f"port: {port}").replace("format: json", "format: json\n  level: debug")
    (directory / "receipt.yaml").write_text(config)
    for name in ("read-tokens", "write-tokens"):
        (directory / name).write_text(f"a-{name}-secret-of-enough-length\n")
        (directory / name).chmod(0o600)
    arguments = command.split()
    assert arguments[0] == INSTALLED and CONFIG in arguments, arguments
    return [CLI if argument == INSTALLED else str(directory / "receipt.yaml") if argument == CONFIG else argument
            for argument in arguments]


def test_the_environment_file_names_only_variables_the_server_reads():
    """Set or shown commented out, each variable is one `receipt serve` falls back to."""
    text = (DIST / "receipt-serve.env").read_text()
    named = re.findall(r"^#? ?([A-Z][A-Z0-9_]*)=", text, re.M)
    assert named, text
    sources = "".join(path.read_text() for path in (DIST.parent / "Server" / "Sources" / "receipt").glob("*.swift"))
    assert [name for name in named if f'"{name}"' not in sources] == [], named


def test_the_command_it_runs_is_a_configuration_serve_accepts(tmp_path):
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
    arguments = unit_command(tmp_path, port=0)
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
