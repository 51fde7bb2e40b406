#!/usr/bin/env bash
# Installs what building and testing need, when it is missing: OpenSSL headers,
# pkg-config and cmocka from Debian; pytest and cryptography (for the test CA
# minter) from PyPI. The Swift toolchain itself
# must already be on PATH. Safe to run again: it installs nothing that is present.
set -euo pipefail

missing=()
[ -f /usr/include/openssl/evp.h ] || missing+=(libssl-dev)
[ -f /usr/include/cmocka.h ] || missing+=(libcmocka-dev)
command -v pkg-config >/dev/null || missing+=(pkg-config)
command -v openssl >/dev/null || missing+=(openssl)
command -v readelf >/dev/null || missing+=(binutils)
command -v valgrind >/dev/null || missing+=(valgrind)
command -v bc >/dev/null || missing+=(bc)

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

for module in pytest cryptography; do
  if ! python3 -c "import $module" 2>/dev/null; then
    echo "install-deps: installing $module"
    python3 -m pip install -q "$module"
  fi
done

command -v swift >/dev/null || { echo "install-deps: swift is not on PATH (Swift 6 toolchain required)"; exit 1; }
