#!/usr/bin/env bash
# The Debian packages where a user installs them: a minimal Debian root made by debootstrap from
# Debian's registry (the host's release and mirror), the three packages installed into it by apt,
# then there, with no toolchain: a C program built with pkg-config and run, `receipt verify` on a
# minted receipt, the example configuration checked, the unit verified by systemd-analyze, the
# wheel installed by pip into a venv of Debian's Python and used; then the packages purged and no
# file of theirs left.
#   Tests/deb/check_debs.sh DEB_DIR WHEEL MINTED_RECEIPT TEST_CA_ROOT
# The root is made once and kept (build/deb-root-RELEASE.tar, made again after a week); each run
# works on a copy. Skipped, saying so, where it cannot run: not root, or no debootstrap
# (scripts/install-deps.sh test installs it).
set -euo pipefail
debs=$(realpath "$1"); wheel=$(realpath "$2"); receipt=$(realpath "$3"); anchor=$(realpath "$4")
if [ "$(id -u)" != 0 ] || ! command -v debootstrap >/dev/null; then
    echo "deb: SKIPPED (the package test needs root and debootstrap to make a Debian root)"; exit 0
fi
. /etc/os-release
suite=${VERSION_CODENAME:?no VERSION_CODENAME in /etc/os-release}
mirror=${DEBIAN_MIRROR:-$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)}
mirror=${mirror:-http://deb.debian.org/debian}
cache=$(realpath build)/deb-root-$suite.tar
work=$(realpath build)/deb-check
root=$work/root

# Whatever is mounted under the work folder (proc, and what debootstrap may bind in a container)
# comes off before it is removed, and removal never crosses into another file system.
cleanup() {
    [ -d "$work" ] || return 0
    findmnt -rn -o TARGET | grep "^$work/" | sort -r | while read -r mount; do umount -l "$mount"; done
    if findmnt -rn -o TARGET | grep -q "^$work/"; then echo "deb: $work still has mounts; not removed" >&2; return 1; fi
    rm -rf --one-file-system "$work"
}
cleanup
trap cleanup EXIT
mkdir -p "$root"

# What the test itself needs in the root, never the packages' own dependencies (apt brings those).
tools=gcc,libc6-dev,pkg-config,python3-venv,systemd,ca-certificates
if [ -f "$cache" ] && [ -n "$(find "$cache" -mtime -7)" ]; then
    tar -xf "$cache" -C "$root"
else
    echo "deb: making a $suite root from $mirror (kept in $cache)"
    debootstrap --variant=minbase --include="$tools" "$suite" "$root" "$mirror" > "$work/debootstrap.log" 2>&1 \
        || { tail -20 "$work/debootstrap.log"; exit 1; }
    chroot "$root" apt-get update -qq
    tar -cf "$cache.new" -C "$root" . && mv "$cache.new" "$cache"
fi
mount -t proc proc "$root/proc"
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }

mkdir -p "$root/tmp/debs"
cp "$debs"/*.deb "$wheel" "$receipt" "$anchor" "$root/tmp/debs/"
files_before=$(in_root find / -xdev -path /proc -prune -o -path /tmp -prune -o -print | sort)
in_root sh -c 'DEBIAN_FRONTEND=noninteractive apt-get install -y -qq /tmp/debs/*.deb >/tmp/apt.log 2>&1' \
    || { tail -30 "$root/tmp/apt.log"; exit 1; }
echo "deb: installed $(cd "$debs" && ls *.deb | tr '\n' ' ')"

# A program linked with packed relative relocations loads only with glibc 2.36 or later, which
# dpkg-shlibdeps does not see (no symbol carries it): the package must say so itself.
if readelf -V "$root/usr/bin/receipt" | grep 'Name: GLIBC_ABI_DT_RELR' >/dev/null; then
    needs=$(dpkg-deb -f "$debs"/receipt_*.deb Depends | sed -n 's/.*libc6 (>= \([^)]*\)).*/\1/p')
    dpkg --compare-versions "${needs:-0}" ge 2.36 || { echo "deb: receipt needs glibc 2.36 but depends on libc6 (>= ${needs:-any})" >&2; exit 1; }
    echo "deb: receipt needs glibc 2.36 (packed relocations) and depends on libc6 (>= $needs)"
fi

# A C program, built as a Debian user builds one.
cat > "$root/tmp/app.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <receipt.h>
int main(int argc, char **argv) {
    FILE *file = fopen(argv[1], "rb");
    if (!file) return 3;
    unsigned char bytes[65536];
    size_t length = fread(bytes, 1, sizeof bytes, file);
    fclose(file);
    receipt_t *receipt = NULL;
    receipt_error_t error;
    if (receipt_parse(bytes, length, &receipt, &error) != RECEIPT_OK) { fprintf(stderr, "%s\n", error.detail); return 1; }
    const char *bundle = NULL;
    size_t bundle_length = 0;
    receipt_get_string(receipt, RECEIPT_FIELD_BUNDLE_ID, &bundle, &bundle_length);
    printf("%s %.*s\n", receipt_version_string(), (int)bundle_length, bundle);
    receipt_free(receipt);
    return 0;
}
C
in_root sh -c 'cc -o /tmp/app /tmp/app.c $(pkg-config --cflags --libs receipt) && /tmp/app /tmp/debs/'"$(basename "$receipt")" \
    | tee "$work/app.out"
grep -q "com.example.minted" "$work/app.out"

in_root receipt verify "/tmp/debs/$(basename "$receipt")" --anchor "/tmp/debs/$(basename "$anchor")" --no-apple-root \
    | grep -qx "VALID"
echo "deb: receipt verify: VALID"
# What the package made, as the unit needs it: the service's user reads its configuration and
# tokens, and nobody else.
modes() { in_root stat -c '%n %U:%G %a' /etc/receipt /etc/receipt/receipt.yaml /etc/receipt/read-tokens \
    /etc/receipt/write-tokens /var/lib/receipt; }
expected="/etc/receipt root:receipt 750
/etc/receipt/receipt.yaml root:receipt 640
/etc/receipt/read-tokens receipt:receipt 600
/etc/receipt/write-tokens receipt:receipt 600
/var/lib/receipt receipt:receipt 700"
[ "$(modes)" = "$expected" ] || { echo "deb: modes:"; modes; exit 1; }
tokens=$(in_root cat /etc/receipt/read-tokens /etc/receipt/write-tokens)
in_root runuser -u receipt -- receipt serve --config /etc/receipt/receipt.yaml --check-config | grep -q "configuration ok"
echo "deb: receipt serve --check-config with /etc/receipt/receipt.yaml, as the receipt user: ok"
# Installed again (as an upgrade configures it): the tokens and the modes are kept.
in_root sh -c 'DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --reinstall /tmp/debs/receipt_*.deb >/tmp/apt.log 2>&1' \
    || { tail -30 "$root/tmp/apt.log"; exit 1; }
[ "$(modes)" = "$expected" ] && [ "$(in_root cat /etc/receipt/read-tokens /etc/receipt/write-tokens)" = "$tokens" ] \
    || { echo "deb: reinstalling changed the tokens or the modes"; modes; exit 1; }
echo "deb: reinstalled; tokens and modes kept"
in_root systemd-analyze verify --man=no /usr/lib/systemd/system/receipt-serve.service 2>&1 | tee "$work/analyze.out"
[ ! -s "$work/analyze.out" ] || { echo "deb: systemd-analyze found the above"; exit 1; }
echo "deb: systemd-analyze verify receipt-serve.service: no finding"

# The wheel, in a venv of Debian's own Python.
in_root python3 -m venv /tmp/venv
in_root /tmp/venv/bin/pip install -q --no-index --disable-pip-version-check "/tmp/debs/$(basename "$wheel")"
in_root /tmp/venv/bin/python3 -c '
import sys, libreceipt
receipt = libreceipt.Receipt.from_file(sys.argv[1])
verdict = libreceipt.Verifier(apple_root=False, anchors=[open(sys.argv[2], "rb").read()]).verify(receipt)
assert verdict.valid, verdict.to_json()
print("deb: the wheel in Debian python3", sys.version.split()[0], "verified", receipt.bundle_id)
' "/tmp/debs/$(basename "$receipt")" "/tmp/debs/$(basename "$anchor")"

# Purged, nothing of theirs is left: every file and folder outside /tmp is as it was, but what
# the dependencies apt brought installed (which apt would autoremove), and the system user.
packaged=$(in_root dpkg-query -L libreceipt1 libreceipt-dev receipt | grep -vx "/\." | sort -u)
in_root sh -c 'DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq receipt libreceipt-dev libreceipt1 >/tmp/apt.log 2>&1' \
    || { tail -30 "$root/tmp/apt.log"; exit 1; }
left=$(for path in $packaged /etc/receipt /var/lib/receipt; do
    if [ -e "$root$path" ] && ! grep -qx "$path" <<<"$files_before"; then echo "$path"; fi
done)
[ -z "$left" ] || { echo "deb: left after purge:"; echo "$left"; exit 1; }
echo "deb: purged; none of the packages' $(wc -l <<<"$packaged") paths left"
