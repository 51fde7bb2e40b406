"""A process that loads libreceipt.so.1 must exit cleanly, whatever else it does: use another
OpenSSL (Python's `cryptography` carries its own, `hashlib` and `ssl` the system's), or have the
library file replaced under it by a rebuild or a reinstall.

The crash the hardening issue reported (SIGSEGV in the loader's _dl_fini, "calling" the library's
base address) came from the second: the Makefile copied each new build over build/lib/libreceipt.so.1
in place, and a process that had the old file mapped then read its finalizers from the new bytes.
Files are now replaced by rename (scripts/replace-file.sh), which leaves a mapped file's pages alone.
"""
import os
import pathlib
import shutil
import signal
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
LIBRARY = pathlib.Path(os.environ.get("RECEIPT_LIBRARY", ROOT / "build/lib/libreceipt.so.1"))
UNSTRIPPED = ROOT / ".build/release/libreceipt.so"
REPLACE = ROOT / "scripts/replace-file.sh"
RUNS = 25

# Loads the library through the binding, verifies a minted receipt with it, then works with the two
# other OpenSSLs of a Python process and exits; prints the verdict so the test knows it ran.
HOST = r"""
import hashlib, ssl, sys
sys.path.insert(0, sys.argv[3])
import libreceipt
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
verifier = libreceipt.Verifier(anchors=[open(sys.argv[2], "rb").read()], apple_root=False)
verdict = verifier.verify_bytes(open(sys.argv[1], "rb").read())
key = rsa.generate_private_key(65537, 2048)
key.sign(b"x", padding.PKCS1v15(), hashes.SHA256())
ec.generate_private_key(ec.SECP256R1()).sign(b"x", ec.ECDSA(hashes.SHA256()))
hashlib.sha256(b"x").hexdigest()
ssl.create_default_context()
print(verdict.status_name)
"""

# Holds the library (a path given) loaded until told to exit on stdin.
HOLDER = r"""
import ctypes, sys
ctypes.CDLL(sys.argv[1])
print("loaded", flush=True)
sys.stdin.readline()
"""


def describe(code):
    return f"signal {signal.Signals(-code).name}" if code < 0 else f"exit {code}"


def test_a_host_with_two_other_openssls_exits_cleanly_every_time(minted, test_ca):
    env = dict(os.environ, RECEIPT_LIBRARY=str(LIBRARY))
    failures = []
    for run in range(RUNS):
        done = subprocess.run([sys.executable, "-c", HOST, str(minted["der"]), str(test_ca / "root.pem"),
                               str(ROOT / "bindings/python")], capture_output=True, text=True, env=env, timeout=120)
        if done.returncode != 0 or done.stdout.strip() != "RECEIPT_OK":
            failures.append(f"run {run}: {describe(done.returncode)}, out {done.stdout!r}, err {done.stderr[-300:]!r}")
    assert not failures, "\n".join(failures)


def hold(path):
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "loaded"
    return holder


def release(holder):
    holder.stdin.write("\n")
    holder.stdin.close()
    return holder.wait(timeout=60)


@pytest.mark.skipif(not UNSTRIPPED.exists(), reason=f"{UNSTRIPPED} is absent (make lib builds it)")
def test_replacing_a_loaded_library_leaves_its_host_unharmed(tmp_path):
    # The installed copy is stripped; the build's own is not: replacing one by the other
    # really changes the file, as a rebuild does.
    installed = tmp_path / "libreceipt.so.1"
    shutil.copy(LIBRARY, installed)
    holder = hold(installed)
    subprocess.run([str(REPLACE), str(UNSTRIPPED), str(installed)], check=True)
    assert installed.read_bytes() == UNSTRIPPED.read_bytes()
    code = release(holder)
    assert code == 0, f"the host of a replaced library ended with {describe(code)}"


def test_make_lib_leaves_a_host_of_build_lib_unharmed():
    """`make lib` while another process has build/lib/libreceipt.so.1 loaded, as when a test,
    a Spark worker or a notebook runs beside a rebuild."""
    holder = hold(LIBRARY)
    subprocess.run(["make", "-s", "lib"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    code = release(holder)
    assert code == 0, f"the host of build/lib/libreceipt.so.1 ended with {describe(code)} after make lib"
