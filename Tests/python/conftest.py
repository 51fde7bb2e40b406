import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("RECEIPT_SHARED_FIXTURES", ROOT.parent / "shared" / "fixtures" / "apple"))
MINT = ROOT / "Tests" / "support" / "mint_receipt.py"


@pytest.fixture(scope="session")
def minted(tmp_path_factory):
    """Receipts minted for this run: name -> path."""
    directory = tmp_path_factory.mktemp("minted")
    variants = {"der": [], "ber": ["--ber", "--purchases", "2"], "b64": ["--base64", "--purchases", "1"],
                "empty": ["--purchases", "0"]}
    paths = {}
    for name, flags in variants.items():
        path = directory / f"{name}.receipt"
        subprocess.run([sys.executable, str(MINT), str(path), *flags], check=True)
        paths[name] = path
    return paths


@pytest.fixture
def shared():
    """The real receipts in ../shared; skipped by name when absent."""
    if not (SHARED / "expected.jsonl").exists():
        pytest.skip(f"{SHARED} is absent: real-receipt tests skipped")
    return SHARED
