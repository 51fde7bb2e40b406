#!/usr/bin/env bash
# Fails unless the shared library is embeddable: it needs nothing beyond libc,
# libm, libstdc++, libgcc_s, libcrypto.so.3 (and the dynamic loader), carries no
# RPATH/RUNPATH into a Swift toolchain, exports only receipt_* symbols, and has
# the SONAME libreceipt.so.1.
set -euo pipefail
lib=${1:?usage: check_embeddable.sh path/to/libreceipt.so.1}
failed=0
fail() { echo "check_embeddable: FAIL: $*"; failed=1; }

allowed='^(libc\.so\.6|libm\.so\.6|libstdc\+\+\.so\.6|libgcc_s\.so\.1|libcrypto\.so\.3|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1)$'
needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
for dependency in $needed; do
  [[ $dependency =~ $allowed ]] || fail "depends on $dependency"
done
echo "NEEDED: $(echo $needed)"

# SwiftPM writes RUNPATH $ORIGIN, which is harmless; any other search path is not.
runpath=$(readelf -d "$lib" | sed -n 's/.*(\(RPATH\|RUNPATH\)).*\[\(.*\)\]/\2/p')
if [ -n "$runpath" ] && [ "$runpath" != '$ORIGIN' ]; then
  fail "has a library search path: $runpath"
fi

soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libreceipt.so.1" ] || fail "SONAME is '$soname', expected libreceipt.so.1"

exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | sed 's/@.*//')
others=$(echo "$exported" | grep -v -E '^(receipt_[a-z0-9_]+|RECEIPT_1|RECEIPT_APPSTORE_1|RECEIPT_SERVER_API_1)$' || true)
[ -z "$others" ] || fail "exports non-receipt symbols: $(echo $others | head -c 400)"
count=$(echo "$exported" | grep -c '^receipt_' || true)
header_count=$(grep -cE '^[a-z0-9_]+( [a-z0-9_]+)* \*?receipt_[a-z0-9_]+\(' "$(dirname "$0")/../../Include/receipt.h" || true)
[ "$count" -eq "$header_count" ] || fail "exports $count receipt_* functions, the header declares $header_count"
echo "exports: $count receipt_* functions (header declares $header_count)"

# The opt-in tiers have their own versions: every receipt_appstore_* under RECEIPT_APPSTORE_1,
# every receipt_api_* under RECEIPT_SERVER_API_1, everything else under RECEIPT_1.
versions=$(nm -D --defined-only "$lib" | awk '$3 ~ /^receipt_/ {print $3}')
misplaced=$(echo "$versions" | grep -v -E '^receipt_appstore_[a-z_]+@@RECEIPT_APPSTORE_1$|^receipt_api_[a-z0-9_]+@@RECEIPT_SERVER_API_1$|^receipt_[a-z0-9_]+@@RECEIPT_1$' || true)
misplaced+=$(echo "$versions" | grep -E '^receipt_(appstore|api)_[a-z0-9_]+@@RECEIPT_1$' || true)
[ -z "$misplaced" ] || fail "symbols in the wrong version node: $(echo $misplaced | head -c 400)"
echo "versions: $(echo "$versions" | grep -c '@@RECEIPT_1$') in RECEIPT_1, $(echo "$versions" | grep -c '@@RECEIPT_APPSTORE_1$') in RECEIPT_APPSTORE_1, $(echo "$versions" | grep -c '@@RECEIPT_SERVER_API_1$') in RECEIPT_SERVER_API_1"

# Load it with only the system's library path: no Swift toolchain on the search path.
if ! env -i LD_LIBRARY_PATH= /usr/bin/python3 -c "import ctypes,sys; ctypes.CDLL(sys.argv[1]).receipt_version()" "$(readlink -f "$lib")"; then
  fail "does not load without the Swift toolchain's libraries"
fi

[ $failed -eq 0 ] && echo "check_embeddable: OK ($lib)"
exit $failed
