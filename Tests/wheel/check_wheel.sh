#!/usr/bin/env bash
# The wheel as a user meets it: installed into a fresh virtual environment, used from /
# with no RECEIPT_LIBRARY, and type-checked by mypy --strict.
#   Tests/wheel/check_wheel.sh WHEEL MINTED_RECEIPT TEST_CA_ROOT
set -euo pipefail
wheel=$(realpath "$1"); receipt=$(realpath "$2"); root=$(realpath "$3")
# It holds no CPython extension, only a library ctypes loads: any Python 3 on a manylinux platform,
# the one auditwheel names for the library's symbols.
case $(basename "$wheel") in
  *-py3-none-manylinux_*.whl) ;;
  *) echo "wheel: $(basename "$wheel") is not tagged py3-none-manylinux_*"; exit 1 ;;
esac
shown=$(PATH=$(realpath build)/venv/bin:$PATH auditwheel show "$wheel" 2>&1)  # the venv's (make venv)
grep -q "is consistent with the following platform tag: \"$(basename "$wheel" .whl | sed 's/.*-py3-none-//')\"" <<<"$(tr '\n' ' ' <<<"$shown" | tr -s ' ')" \
  || { echo "wheel: auditwheel show does not name its tag:"; echo "$shown"; exit 1; }
work=$(realpath build)/wheel-check
rm -rf "$work"
python3 -m venv "$work/venv"
"$work/venv/bin/python3" -m pip install -q --disable-pip-version-check "$wheel" mypy
cd /
env -u RECEIPT_LIBRARY -u PYTHONPATH "$work/venv/bin/python3" - "$receipt" "$root" <<'PY'
import sys
import libreceipt
import libreceipt._native as native
assert native.PACKAGED_LIBRARY.startswith(sys.prefix), native.PACKAGED_LIBRARY
receipt = libreceipt.Receipt.from_file(sys.argv[1])
assert receipt.bundle_id == "com.example.minted", receipt.bundle_id
verdict = libreceipt.Verifier(apple_root=False, anchors=[open(sys.argv[2], "rb").read()]).verify(receipt)
assert verdict.valid, verdict.to_json()
for bad in (42, None):
    try:
        libreceipt.Receipt(bad)
        raise SystemExit(f"Receipt({bad!r}) did not raise TypeError")
    except TypeError:
        pass
try:
    libreceipt.Verifier(bundle_id=b"x")
    raise SystemExit("Verifier(bundle_id=b'x') did not raise TypeError")
except TypeError:
    pass
print(f"wheel: parsed and verified from / with the packaged library ({native.PACKAGED_LIBRARY})")
PY
cat > "$work/wrong.py" <<'PY'
import libreceipt
receipt = libreceipt.Receipt(42)
PY
cat > "$work/right.py" <<'PY'
import libreceipt
def bundle(path: str) -> str:
    with libreceipt.Receipt.from_file(path) as receipt:
        verdict = libreceipt.Verifier(bundle_id="com.example.minted").verify(receipt)
        return (receipt.bundle_id or "") + verdict.status_name
PY
cd "$work"
"$work/venv/bin/mypy" --strict --no-error-summary right.py
if "$work/venv/bin/mypy" --strict wrong.py > mypy.log 2>&1 || ! grep -q "arg-type" mypy.log; then
  cat mypy.log
  echo "wheel: mypy --strict did not flag libreceipt.Receipt(42)"
  exit 1
fi
echo "wheel: mypy --strict accepts typed use and flags Receipt(42) [arg-type]"
# docs/spark.md's command: the Spark extra installed from the wheel itself, beside it (installing it
# from ./bindings/python would put the code-only package in the wheel's place).
"$work/venv/bin/python3" -m pip install -q --disable-pip-version-check "$wheel[spark]"
cd /
env -u RECEIPT_LIBRARY -u PYTHONPATH "$work/venv/bin/python3" - "$receipt" <<'PY'
import sys
import libreceipt
import libreceipt._native as native
import libreceipt.spark  # noqa: F401 (PySpark, pyarrow and pandas, from the extra)
assert native.PACKAGED_LIBRARY.startswith(sys.prefix), native.PACKAGED_LIBRARY
assert libreceipt.Receipt.from_file(sys.argv[1]).bundle_id == "com.example.minted"
print("wheel: the [spark] extra installed beside the wheel; the packaged library still loads")
PY
