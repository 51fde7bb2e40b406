import contextlib
import json
import os
import pathlib
import subprocess
import sys
import urllib.request

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("RECEIPT_SHARED_FIXTURES", ROOT.parent / "shared" / "fixtures" / "apple"))
MINTER = ROOT / "tools" / "mint_receipt.py"


def run_minter(*args):
    subprocess.run([sys.executable, str(MINTER), *map(str, args)], check=True)


@pytest.fixture(scope="session")
def test_ca(tmp_path_factory):
    """A test CA shaped like Apple's, made for this run: its directory."""
    directory = tmp_path_factory.mktemp("ca")
    run_minter("ca", directory)
    return directory


@pytest.fixture(scope="session")
def mint(test_ca, tmp_path_factory):
    """mint(*flags) -> path of a receipt minted with the test CA."""
    directory = tmp_path_factory.mktemp("minted")
    made = {}

    def make(*flags):
        if flags not in made:
            path = directory / f"receipt-{len(made)}.der"
            run_minter("receipt", path, "--ca", test_ca, *flags)
            made[flags] = path
        return made[flags]

    return make


@pytest.fixture(scope="session")
def minted(mint):
    """The receipts most tests read: name -> path."""
    return {"der": mint("--purchases", "3"), "ber": mint("--ber", "--purchases", "2"),
            "b64": mint("--base64", "--purchases", "1"), "empty": mint("--purchases", "0")}


@pytest.fixture
def shared():
    """The real receipts in ../shared; skipped by name when absent."""
    if not (SHARED / "expected.jsonl").exists():
        pytest.skip(f"{SHARED} is absent: real-receipt tests skipped")
    return SHARED


SHARED_JWS = SHARED.parent / "jws"
JWS_MINTER_DIR = ROOT / "tools"


@pytest.fixture(scope="session")
def jws_ca(tmp_path_factory):
    """A JWS test CA shaped like Apple's (tools/mint_jws.py), made for this run: (root.pem path, chains)."""
    sys.path.insert(0, str(JWS_MINTER_DIR))
    import mint_jws
    directory = tmp_path_factory.mktemp("jws-ca")
    mint_jws.create_ca(str(directory))
    return directory / "root.pem", mint_jws.load_ca(str(directory))


@pytest.fixture
def shared_jws():
    """The real JWS in ../shared; skipped by name when absent."""
    if not (SHARED_JWS / "expected.jsonl").exists():
        pytest.skip(f"{SHARED_JWS} is absent: real-JWS tests skipped")
    return SHARED_JWS


MOCK_API_IDS = {"key_id": "KEY123ABCD", "issuer_id": "57246542-96fe-1a63-e053-0824d011072a", "bundle_id": "com.example.app"}


@contextlib.contextmanager
def api_mock_running(directory, key_pem, *flags):
    """tools/mock_appstore_api.py (with `flags`) on loopback, trusting `key_pem` (written to DIRECTORY/key.pem) under
    MOCK_API_IDS and signing with a test CA it makes in DIRECTORY/ca: yields (base URL, requests()),
    requests() listing what it received and requests.reset() replaying its scripted failures."""
    (directory / "key.pem").write_bytes(key_pem)
    process = subprocess.Popen([sys.executable, str(ROOT / "tools" / "mock_appstore_api.py"), "--ca",
                                str(directory / "ca"), "--key", str(directory / "key.pem"),
                                "--key-id", MOCK_API_IDS["key_id"], "--issuer-id", MOCK_API_IDS["issuer_id"],
                                "--bundle-id", MOCK_API_IDS["bundle_id"], *flags], stdout=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        assert line.startswith("listening on "), line
        base = line.split()[-1]

        def requests():
            with urllib.request.urlopen(base + "/__requests") as answer:
                return json.loads(answer.read())

        requests.reset = lambda: urllib.request.urlopen(urllib.request.Request(base + "/__reset", method="POST")).close()
        yield base, requests
    finally:
        process.terminate()
        process.wait(timeout=10)
