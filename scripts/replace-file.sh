#!/usr/bin/env bash
# replace-file.sh [--strip] SRC DEST: puts a copy of SRC at DEST by rename, never by
# writing into DEST in place. A process that has DEST mapped (Python or Spark with
# libreceipt.so.1 loaded, a running `receipt serve`) keeps the old file's pages; a
# `cp` over it changes those pages under it, and that process then crashes, often
# only at exit, when the loader runs finalizers read from the changed pages. An
# identical DEST is left alone.
set -euo pipefail
strip=0
if [ "${1:-}" = --strip ]; then strip=1; shift; fi
src=$1 dest=$2
tmp=$(mktemp "$dest.XXXXXX")
trap 'rm -f "$tmp"' EXIT
cp "$src" "$tmp"
if [ "$strip" = 1 ]; then strip --strip-unneeded "$tmp"; fi
chmod 755 "$tmp"
if cmp -s "$tmp" "$dest"; then exit 0; fi
mv -f "$tmp" "$dest"
