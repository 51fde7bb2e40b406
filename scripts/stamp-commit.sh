#!/usr/bin/env bash
# stamp-commit.sh HEADER: writes the commit the tree is at (with "-modified" when it holds changes
# not committed) into HEADER as RECEIPT_BUILD_COMMIT, for `receipt --version` and /metrics'
# receipt_build_info. An unchanged stamp leaves HEADER alone, so that nothing is rebuilt for it;
# outside a git checkout (a source tarball) HEADER is removed and the build says "unknown".
#   scripts/stamp-commit.sh --print   prints the same commit (the packages' changelog names it).
set -euo pipefail
header=$1
if commit=$(git rev-parse --verify -q HEAD 2>/dev/null); then
    # Untracked files do not count: build output and venvs are ignored, a stray file changes no source.
    if ! git diff --quiet HEAD -- 2>/dev/null; then commit="$commit-modified"; fi
    if [ "$header" = --print ]; then echo "$commit"; exit 0; fi
    line="#define RECEIPT_BUILD_COMMIT \"$commit\""
    if [ "$(cat "$header" 2>/dev/null)" != "$line" ]; then printf '%s\n' "$line" > "$header"; fi
elif [ "$header" = --print ]; then
    echo unknown
else
    rm -f "$header"
fi
