import os
import pathlib
import subprocess
import sys

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
