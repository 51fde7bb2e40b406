#!/usr/bin/env bash
# Unpacks the test files of Apple's App Store Server Library, from its source distribution on
# PyPI, in the version the venv holds, into DIR/tests (Tests/python/test_apple_suite.py runs them
# against libreceipt's drop-in). Nothing of Apple's is committed. Safe to run again; without
# network the tests that need them are skipped by name.   scripts/fetch-apple-tests.sh VENV DIR
set -euo pipefail
venv=${1:?usage: scripts/fetch-apple-tests.sh VENV DIR}
dir=${2:?usage: scripts/fetch-apple-tests.sh VENV DIR}
version=$("$venv/bin/python3" -c 'from importlib.metadata import version; print(version("app-store-server-library"))')
[ -f "$dir/$version/tests/test_payload_verification.py" ] && exit 0
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
if ! "$venv/bin/python3" -m pip download -q --disable-pip-version-check --no-deps --no-binary :all: \
     -d "$scratch" "app-store-server-library==$version" >/dev/null 2>&1; then
  echo "fetch-apple-tests: could not download app-store-server-library $version's source; its tests will be skipped"
  exit 0
fi
tar -xzf "$scratch"/app_store_server_library-*.tar.gz -C "$scratch"
rm -rf "${dir:?}/$version"
mkdir -p "$dir/$version"
cp -r "$scratch"/app_store_server_library-*/tests "$dir/$version/tests"
echo "fetch-apple-tests: Apple's test files of $version in $dir/$version/tests"
