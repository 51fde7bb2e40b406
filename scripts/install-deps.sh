#!/usr/bin/env bash
# Installs what is missing from Debian's packages, never anything into a system Python.
#   scripts/install-deps.sh build   what `make` and `make install` need: OpenSSL headers, pkg-config, and libcurl and
#                                   zlib headers (the C example of the App Store Server API; Foundation's networking)
#   scripts/install-deps.sh deb     and dpkg-dev, for make deb
#   scripts/install-deps.sh test    and what the tests need: cmocka, valgrind, readelf, openssl, bc,
#                                   a Java runtime (Spark), wrk (the server's load bench),
#                                   PostgreSQL (the server's store, tested in a throwaway
#                                   cluster the tests start), groff (the man page), chromium (the
#                                   dashboard, rendered headless), PostgreSQL's JDBC driver (Spark
#                                   reads the store), python3-venv for the tests' virtual environment,
#                                   and dpkg-dev, lintian and debootstrap (the Debian packages' test)
# The Swift toolchain itself must already be on PATH. Safe to run again: it installs
# nothing that is present.
set -euo pipefail
scope=${1:-build}

missing=()
[ -f /usr/include/openssl/evp.h ] || missing+=(libssl-dev)
command -v pkg-config >/dev/null || missing+=(pkg-config)
# libcurl: the C example of the App Store Server API links it; zlib: Foundation's networking uses it.
[ -f /usr/include/x86_64-linux-gnu/curl/curl.h ] || [ -f /usr/include/curl/curl.h ] || missing+=(libcurl4-openssl-dev)
[ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
# make deb computes the packages' dependencies (dpkg-shlibdeps); the tests build them.
if [ "$scope" = deb ] || [ "$scope" = test ]; then
  command -v dpkg-shlibdeps >/dev/null || missing+=(dpkg-dev)
fi
if [ "$scope" = test ]; then
  [ -f /usr/include/cmocka.h ] || missing+=(libcmocka-dev)
  command -v openssl >/dev/null || missing+=(openssl)
  command -v readelf >/dev/null || missing+=(binutils)
  command -v valgrind >/dev/null || missing+=(valgrind)
  command -v bc >/dev/null || missing+=(bc)
  command -v java >/dev/null || missing+=(openjdk-17-jre-headless)  # Spark, for libreceipt.spark's tests
  command -v wrk >/dev/null || missing+=(wrk)  # make bench's load row on `receipt serve`
  command -v curl >/dev/null || missing+=(curl)  # README's notification loop
  command -v groff >/dev/null || missing+=(groff-base)  # test-install renders the man page
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)  # receipt serve's PostgreSQL store, in a throwaway cluster
  command -v chromium >/dev/null || missing+=(chromium)  # the dashboard's tests render it in a real browser
  [ -f /usr/share/java/postgresql.jar ] || missing+=(libpostgresql-jdbc-java)  # Spark reads the store over JDBC
  command -v lintian >/dev/null || missing+=(lintian)  # test-deb: the packages hold no error
  [ -x /usr/sbin/debootstrap ] || missing+=(debootstrap)  # test-deb: a Debian root to install them into
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

command -v swift >/dev/null || { echo "install-deps: swift is not on PATH (Swift 6 toolchain required)"; exit 1; }
