#!/usr/bin/env bash
# Creates the virtual environment the tests and tools run in, with pytest and
# cryptography (for the test CA minter), and any PACKAGE given (the Makefile adds
# PySpark and pyarrow):   scripts/install-venv.sh DIR [PACKAGE...]
# The system Python is never pip-installed into: Debian's is externally managed
# (PEP 668). Where `python3 -m venv` is missing (stock Debian), python3-venv is
# installed from Debian first. Safe to run again.
set -euo pipefail
venv=${1:?usage: scripts/install-venv.sh DIR [PACKAGE...]}
shift
packages=(pytest cryptography "$@")

if [ ! -x "$venv/bin/python3" ]; then
  rm -rf "$venv"
  if ! python3 -m venv "$venv" >/dev/null 2>&1; then
    echo "install-venv: python3 -m venv is unavailable; installing python3-venv"
    rm -rf "$venv"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv "$venv"
  fi
fi
missing=()
for package in "${packages[@]}"; do
  # Installed in a version the requirement allows ("pandas<3" included): asked of the venv's
  # own metadata, with the requirement parser pip carries.
  "$venv/bin/python3" - "$package" <<'PY' 2>/dev/null || missing+=("$package")
import sys
from importlib.metadata import version
from pip._vendor.packaging.requirements import Requirement
requirement = Requirement(sys.argv[1])
sys.exit(0 if requirement.specifier.contains(version(requirement.name), prereleases=True) else 1)
PY
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-venv: installing ${missing[*]} into $venv"
  "$venv/bin/python3" -m pip install -q --disable-pip-version-check "${missing[@]}"
fi
