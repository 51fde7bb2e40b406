#!/usr/bin/env bash
# The C ABI suite against a sanitizer-instrumented libreceipt.
#   Tests/sanitize.sh address   AddressSanitizer + UndefinedBehaviorSanitizer, whole cmocka suite
#   Tests/sanitize.sh thread    ThreadSanitizer, the 8-thread shared-verifier test at full size
# The Swift suite gets its own run: `swift test --sanitize=address` (see the Makefile).
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:?usage: Tests/sanitize.sh address|thread}
out=build/sanitize-$kind
toolchain_lib=$(dirname "$(command -v swift)")/../lib/swift/linux
mkdir -p $out

RECEIPT_INSTRUMENTED=1 swift build -c release --product receipt --scratch-path .build-$kind \
  -Xswiftc -sanitize=$kind 2>&1 | grep -E "error|Build" | tail -1
scripts/replace-file.sh .build-$kind/release/libreceipt.so $out/libreceipt.so.1
ln -sf libreceipt.so.1 $out/libreceipt.so

case $kind in
  address) flags=(-fsanitize=address,undefined -fno-sanitize-recover=undefined); filter=""; extra=() ;;
  thread) flags=(-fsanitize=thread); filter="test_shared_*"; extra=(-ldispatch -lBlocksRuntime) ;;
  *) echo "unknown sanitizer $kind"; exit 2 ;;
esac
# Every file of the cmocka suite (test_abi.c's main runs the others' groups).
clang -g -O1 "${flags[@]}" -std=c11 -IInclude -o $out/test_abi Tests/c/test_*.c -L$out -lreceipt -lcmocka \
  -lpthread -L"$toolchain_lib" "${extra[@]}" -Wl,-rpath,"$toolchain_lib" -fuse-ld=lld 2>&1 | grep -v "Cannot export" || true

# The minted receipts, tokens, key and canned OCSP answers the suite reads are made by Tests/c's Makefile.
make -s -C Tests/c ../../build/test-c/minted.der ../../build/test-c/api-key.pem ../../build/test-c/ocsp.jws >/dev/null
cd build/test-c
LD_LIBRARY_PATH=$PWD/../../$out:$toolchain_lib RECEIPT_SHARED_FIXTURES=$(cd ../../.. && pwd)/shared/fixtures/apple \
  RECEIPT_FUZZ_REGRESSIONS=$PWD/../../fuzz/regressions RECEIPT_TEST_FILTER=$filter RECEIPT_UNDER_TOOL=$kind \
  ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  TSAN_OPTIONS=halt_on_error=1 ../../$out/test_abi
