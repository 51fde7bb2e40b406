#!/usr/bin/env bash
# make-debs.sh OUT: Debian's three packages from the release build (make deb), into OUT:
#   libreceipt1     the shared library and the valgrind suppressions
#   libreceipt-dev  the header, receipt.pc and the unversioned link
#   receipt         the CLI, its man page and completions, dist/'s unit, environment file and
#                   example configuration (/etc/receipt), a system user and its state directory
#                   (dist/debian's maintainer scripts)
# Files come from `make install` (into a staging root, nothing remade); the version from
# receipt.h; each package's dependencies on Debian's libraries from dpkg-shlibdeps, never typed.
set -euo pipefail
out=${1:?usage: scripts/make-debs.sh OUT}
version=$(sed -n 's/^#define RECEIPT_VERSION_STRING "\(.*\)"/\1/p' Include/receipt.h)-1
architecture=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
maintainer="libreceipt maintainers <maintainers@libreceipt.invalid>"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

make -s -o build -o lib -o cli install DESTDIR="$work/staged" PREFIX=/usr LIBDIR="/usr/lib/$multiarch" >/dev/null
staged=$work/staged

# move PACKAGE PATH...: files of the staged install into a package's tree.
move() {
    local package=$1; shift
    for path in "$@"; do
        mkdir -p "$work/$package/$(dirname "$path")"
        mv "$staged/$path" "$work/$package/$path"
    done
}
move libreceipt1 "usr/lib/$multiarch/libreceipt.so.1" usr/share/libreceipt/valgrind-swift.supp
move libreceipt-dev usr/include/receipt.h "usr/lib/$multiarch/pkgconfig/receipt.pc" "usr/lib/$multiarch/libreceipt.so"
move receipt usr/bin/receipt usr/share/man/man1/receipt.1 usr/share/bash-completion/completions/receipt \
    usr/share/fish/vendor_completions.d/receipt.fish
# Debian's zsh reads vendor completions from its own folder.
mkdir -p "$work/receipt/usr/share/zsh/vendor-completions"
mv "$staged/usr/share/zsh/site-functions/_receipt" "$work/receipt/usr/share/zsh/vendor-completions/_receipt"
gzip -9n "$work/receipt/usr/share/man/man1/receipt.1"
install -D -m 644 dist/receipt-serve.service "$work/receipt/usr/lib/systemd/system/receipt-serve.service"
install -D -m 644 dist/receipt-serve.env "$work/receipt/etc/default/receipt-serve"
install -D -m 644 dist/receipt.yaml "$work/receipt/etc/receipt/receipt.yaml"
install -D -m 644 dist/debian/receipt.lintian-overrides "$work/receipt/usr/share/lintian/overrides/receipt"
left=$(cd "$staged" && find . -type f -o -type l)
[ -z "$left" ] || { echo "make-debs: installed but in no package: $left" >&2; exit 1; }

# Every package: its copyright, a changelog, the unit's folder modes as Debian has them.
for package in libreceipt1 libreceipt-dev receipt; do
    install -D -m 644 dist/debian/copyright "$work/$package/usr/share/doc/$package/copyright"
    printf '%s (%s) unstable; urgency=medium\n\n  * Built from %s.\n\n -- %s  %s\n' \
        "$package" "$version" "$(scripts/stamp-commit.sh --print)" "$maintainer" \
        "$(date -R -u -d "@$(git log -1 --format=%ct 2>/dev/null || date +%s)")" \
        | gzip -9n > "$work/$package/usr/share/doc/$package/changelog.Debian.gz"
done

# depends FILE: the shlibs:Depends dpkg-shlibdeps computes for FILE (it wants a debian/control);
# it stops the script when there is none, so that no package goes out without its dependencies.
depends() {
    mkdir -p "$work/shlibs/debian"
    printf 'Source: libreceipt\n\nPackage: libreceipt\nArchitecture: any\n' > "$work/shlibs/debian/control"
    local computed
    computed=$(cd "$work/shlibs" && dpkg-shlibdeps -O "$1" 2>"$work/shlibs/warnings") \
        || { cat "$work/shlibs/warnings" >&2; exit 1; }
    computed=$(sed -n 's/^shlibs:Depends=//p' <<<"$computed")
    [ -n "$computed" ] || { echo "make-debs: dpkg-shlibdeps found no dependency of $1" >&2; exit 1; }
    # dpkg-shlibdeps reads the symbols a file imports, not a version it needs with no symbol:
    # packed relative relocations (GLIBC_ABI_DT_RELR) need the libc6 whose symbols file first lists it.
    # (grep reads all of readelf's output: -q would stop it early, and pipefail would make that a no.)
    if readelf -V "$1" | grep 'Name: GLIBC_ABI_DT_RELR' >/dev/null; then
        local relr held
        relr=$(sed -n 's/^ GLIBC_ABI_DT_RELR@GLIBC_ABI_DT_RELR \([^ ]*\).*/\1/p' /var/lib/dpkg/info/libc6:*.symbols | head -n 1)
        [ -n "$relr" ] || { echo "make-debs: $1 needs GLIBC_ABI_DT_RELR, which libc6's symbols file does not list" >&2; exit 1; }
        held=$(sed -n 's/.*libc6 (>= \([^)]*\)).*/\1/p' <<<"$computed")
        if [ -z "$held" ]; then
            computed="libc6 (>= $relr), $computed"
        elif dpkg --compare-versions "$relr" gt "$held"; then
            computed=${computed/"libc6 (>= $held)"/"libc6 (>= $relr)"}
        fi
    fi
    echo "$computed"
}

# control PACKAGE SECTION DEPENDS SUMMARY DESCRIPTION [FIELD...]: its DEBIAN/control.
control() {
    local package=$1 section=$2 depends=$3 summary=$4 description=$5; shift 5
    mkdir -p "$work/$package/DEBIAN"
    {
        echo "Package: $package"
        echo "Version: $version"
        echo "Architecture: $architecture"
        echo "Maintainer: $maintainer"
        echo "Installed-Size: $(du -sk --exclude=DEBIAN "$work/$package" | cut -f1)"
        echo "Depends: $depends"
        echo "Section: $section"
        echo "Priority: optional"
        for field in "$@"; do echo "$field"; done
        echo "Description: $summary"
        echo "$description" | fold -s -w 72 | sed 's/ *$//; s/^/ /'
    } > "$work/$package/DEBIAN/control"
}

library_depends=$(depends "$work/libreceipt1/usr/lib/$multiarch/libreceipt.so.1")
program_depends=$(depends "$work/receipt/usr/bin/receipt")
control libreceipt1 libs "$library_depends" "App Store receipts and StoreKit 2 JWS, parsed and verified" \
    "libreceipt parses App Store receipts and StoreKit 2 signed data and verifies them against Apple's pinned root at the time of signing, then bundle, version, environment and device. This package holds the shared library." \
    "Multi-Arch: same"
echo "libreceipt 1 libreceipt1 (>= $version)" > "$work/libreceipt1/DEBIAN/shlibs"
echo "activate-noawait ldconfig" > "$work/libreceipt1/DEBIAN/triggers"

control libreceipt-dev libdevel "libreceipt1 (= $version), libssl-dev" "App Store receipts and StoreKit 2 JWS: development files" \
    "libreceipt parses App Store receipts and StoreKit 2 signed data and verifies them. This package holds the header, receipt.h, and receipt.pc for pkg-config." \
    "Multi-Arch: same"

control receipt net "$program_depends, adduser" "App Store receipts, StoreKit 2 and notifications, verified locally" \
    "receipt inspects and verifies App Store receipts and StoreKit 2 JWS, calls the App Store Server API, and serves (receipt serve) a verifyReceipt stand-in and App Store Server Notifications into a store, with a systemd unit configured in /etc/receipt/receipt.yaml."
for script in postinst prerm postrm; do install -m 755 "dist/debian/receipt.$script" "$work/receipt/DEBIAN/$script"; done
(cd "$work/receipt" && find etc -type f | sed 's|^|/|') > "$work/receipt/DEBIAN/conffiles"

mkdir -p "$out"
rm -f "$out"/*.deb
# xz at level 1: the CLI's 90 MB take 3 s instead of 25, for a package 15% larger.
for package in libreceipt1 libreceipt-dev receipt; do
    dpkg-deb --root-owner-group -Zxz -z1 --build "$work/$package" "$out/${package}_${version}_${architecture}.deb" >/dev/null
done
ls "$out"/*.deb
