#!/bin/bash
#
# Build a release into dist/ (removed and rebuilt on every run):
#
#   gocryptfs_V_linux-static_amd64.tar.gz   CGO_ENABLED=0 builds (Go's ciphers
#   gocryptfs_V_linux-static_arm64.tar.gz   only), no shared libraries needed
#   gocryptfs_V_linux-openssl_amd64.tar.gz  the cgo build with the OpenSSL
#                                           backend (needs libssl3)
#   gocryptfs.1, gocryptfs-xray.1           the man pages
#   gocryptfs_D_amd64.deb                   Debian package of the OpenSSL build
#   SHA256SUMS                              of all of the above
#
# Each tarball holds gocryptfs, gocryptfs-xray and both man pages. V is the
# version (default: ./version.bash without its leading "v"); the binaries
# say "gocryptfs vV". D is V made a Debian version ("-" becomes "+", so a
# build after a tag sorts after it). SOURCE_DATE_EPOCH (default: the time
# of the last commit) fixes the build date and every timestamp in the
# archives, so that the same commit gives the same files.
#
# Usage: ./release.bash [--deb-only] [VERSION]
#   --deb-only   build just the Debian package (what CI checks)
#
# Needs Go, gcc, libssl-dev, dpkg-deb and dpkg-shlibdeps (dpkg-dev);
# ./install-deps.bash --test installs them. Root is not needed.

set -euo pipefail
cd "$(dirname "$0")"
export PATH="$PATH:/usr/local/go/bin"

debonly=false
if [[ ${1:-} == --deb-only ]]; then
	debonly=true
	shift
fi
if (($# > 1)) || [[ ${1:-} == -* ]]; then
	echo "usage: $0 [--deb-only] [VERSION]" >&2
	exit 2
fi
VERSION=${1:-$(./version.bash)}
VERSION=${VERSION#v}
if ! [[ $VERSION =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+~.][0-9A-Za-z.+~-]*)?$ ]]; then
	echo "release.bash: version $VERSION is not X.Y.Z[-suffix]" >&2
	exit 2
fi
DEBVERSION=${VERSION//-/+}
for p in go gcc dpkg-deb dpkg-shlibdeps; do
	if ! command -v "$p" >/dev/null; then
		echo "release.bash: $p not found (./install-deps.bash --test installs what is missing)" >&2
		exit 1
	fi
done

export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
BUILDDATE=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d)
BI=gocryptfs/internal/buildinfo
# -s -w: no symbol table or DWARF (panics still print file:line, from
# pclntab); -trimpath: no build paths in the binaries.
LDFLAGS="-s -w -X $BI.gitVersion=v$VERSION -X $BI.buildDate=$BUILDDATE"

DIST=dist
rm -rf "$DIST"
mkdir -p "$DIST/.work"
WORK=$DIST/.work
trap 'rm -rf "$WORK"' EXIT

# build DIR GOARCH CGO_ENABLED [go build flags...]: both binaries into DIR.
build() {
	local dir=$1 arch=$2 cgo=$3
	shift 3
	mkdir -p "$dir"
	for bin in gocryptfs:. gocryptfs-xray:./gocryptfs-xray; do
		CGO_ENABLED=$cgo GOOS=linux GOARCH=$arch go build -trimpath "$@" \
			-ldflags "$LDFLAGS" -o "$dir/${bin%%:*}" "${bin#*:}"
	done
	echo "release.bash: built $dir (linux/$arch, CGO_ENABLED=$cgo)"
}

# tarball NAME DIR: a reproducible NAME.tar.gz of DIR's binaries and the
# man pages, all owned by root, mtime SOURCE_DATE_EPOCH.
tarball() {
	local name=$1 dir=$2
	cp docs/man/gocryptfs.1 docs/man/gocryptfs-xray.1 "$dir/"
	chmod 0755 "$dir/gocryptfs" "$dir/gocryptfs-xray"
	chmod 0644 "$dir"/*.1
	tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
		-C "$dir" -cf - gocryptfs gocryptfs-xray gocryptfs.1 gocryptfs-xray.1 |
		gzip -9n >"$DIST/$name.tar.gz"
}

# The OpenSSL build: PIE with full RELRO, as Debian builds its C programs
# (lintian's hardening checks).
LDFLAGS_STATIC=$LDFLAGS
LDFLAGS="$LDFLAGS -extldflags=-Wl,-z,relro,-z,now"
build "$WORK/openssl-amd64" amd64 1 -buildmode=pie
LDFLAGS=$LDFLAGS_STATIC
if ! "$WORK/openssl-amd64/gocryptfs" -version | grep -q "^gocryptfs v$VERSION;"; then
	echo "release.bash: the OpenSSL build does not say gocryptfs v$VERSION (or says without_openssl):" >&2
	"$WORK/openssl-amd64/gocryptfs" -version >&2
	exit 1
fi

if ! $debonly; then
	build "$WORK/static-amd64" amd64 0
	build "$WORK/static-arm64" arm64 0
	tarball "gocryptfs_${VERSION}_linux-static_amd64" "$WORK/static-amd64"
	tarball "gocryptfs_${VERSION}_linux-static_arm64" "$WORK/static-arm64"
	cp docs/man/gocryptfs.1 docs/man/gocryptfs-xray.1 "$DIST/"
	chmod 0644 "$DIST"/*.1
	# The OpenSSL build last: tarball copies the man pages into its dir,
	# which the package below takes its binaries from.
	tarball "gocryptfs_${VERSION}_linux-openssl_amd64" "$WORK/openssl-amd64"
fi

# ---- The Debian package, laid out as Debian policy asks: binaries in
# /usr/bin, gzipped man pages in /usr/share/man/man1, copyright and
# changelog.gz in /usr/share/doc/gocryptfs. mount -t fuse.gocryptfs and
# fstab entries need nothing more: mount(8) hands type fuse.gocryptfs to
# mount.fuse3 (package fuse3), which runs "gocryptfs" from PATH.
ROOT=$WORK/deb
DOC=$ROOT/usr/share/doc/gocryptfs
install -d -m 0755 "$ROOT/DEBIAN" "$ROOT/usr/bin" "$ROOT/usr/share/man/man1" "$DOC"
install -m 0755 "$WORK/openssl-amd64/gocryptfs" "$WORK/openssl-amd64/gocryptfs-xray" "$ROOT/usr/bin/"
for m in gocryptfs.1 gocryptfs-xray.1; do
	gzip -9n <"docs/man/$m" >"$ROOT/usr/share/man/man1/$m.gz"
	chmod 0644 "$ROOT/usr/share/man/man1/$m.gz"
done

MAINTAINER="${DEBFULLNAME:-$(git log -1 --format=%an 2>/dev/null || echo gocryptfs)} <${DEBEMAIL:-$(git log -1 --format=%ae 2>/dev/null || echo root@localhost)}>"
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)

# changelog.gz: this project's package is native (no Debian revision), so
# policy names its changelog changelog.gz, in the Debian changelog format.
{
	echo "gocryptfs ($DEBVERSION) unstable; urgency=medium"
	echo
	echo "  * Release $VERSION, built by release.bash from commit $COMMIT."
	echo
	echo " -- $MAINTAINER  $(LC_ALL=C date -u -R -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n >"$DOC/changelog.gz"

# copyright: the Go modules linked into the binaries, and the Go standard
# library, each with its license text from the module cache.
{
	echo "gocryptfs: a clean-room reimplementation of gocryptfs v2 (the format"
	echo "and command line of https://github.com/rfjakob/gocryptfs), in Go."
	echo
	echo "The binaries also contain the following Go modules and the Go standard"
	echo "library, under these licenses:"
	CGO_ENABLED=1 GOOS=linux GOARCH=amd64 go list -deps \
		-f '{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}} {{.Dir}}{{end}}{{end}}' . ./gocryptfs-xray |
		sort -u | while read -r path version dir; do
		echo
		echo "---- $path $version"
		echo
		lic=$(find "$dir" -maxdepth 1 -type f \( -iname 'LICENSE*' -o -iname 'COPYING*' \) | sort | head -n1)
		if [[ -n $lic ]]; then
			cat "$lic"
		else
			echo "(no license file in the module)"
		fi
	done
	echo
	echo "---- Go standard library and runtime $(go env GOVERSION)"
	echo
	cat "$(go env GOROOT)/LICENSE"
} >"$DOC/copyright"
chmod 0644 "$DOC/copyright" "$DOC/changelog.gz"

# Depends: the shared libraries of the OpenSSL build, as dpkg-shlibdeps
# finds them (libc6, libssl3), and fuse3 for fusermount3 and mount.fuse3.
SHL=$WORK/shlibdeps
mkdir -p "$SHL/debian"
printf 'Source: gocryptfs\n\nPackage: gocryptfs\nArchitecture: amd64\n' >"$SHL/debian/control"
shlibs=$(cd "$SHL" && dpkg-shlibdeps -O "$OLDPWD/$ROOT/usr/bin/gocryptfs" "$OLDPWD/$ROOT/usr/bin/gocryptfs-xray" 2>/dev/null)
shlibs=${shlibs#shlibs:Depends=}
if [[ $shlibs != *libc6* ]]; then
	echo "release.bash: dpkg-shlibdeps found no libc6 dependency: $shlibs" >&2
	exit 1
fi

cat >"$ROOT/DEBIAN/control" <<EOF
Package: gocryptfs
Version: $DEBVERSION
Architecture: amd64
Maintainer: $MAINTAINER
Installed-Size: $(du -sk --exclude=DEBIAN "$ROOT" | cut -f1)
Depends: $shlibs, fuse3
Section: utils
Priority: optional
Description: encrypted overlay filesystem (gocryptfs v2 compatible)
 gocryptfs stores every file of a directory tree encrypted, names and
 contents, one ciphertext file per plaintext file, and shows the plaintext
 through FUSE. This is a clean-room reimplementation, compatible with
 gocryptfs v2 on disk and on the command line. As a newer version of
 Debian's gocryptfs package, it replaces that package when installed.
 .
 The package contains gocryptfs (with the OpenSSL cipher backend),
 gocryptfs-xray and their man pages. Entries of type fuse.gocryptfs in
 /etc/fstab mount through mount.fuse3.
EOF
(cd "$ROOT" && find usr -type f -print0 | sort -z | xargs -0 md5sum) >"$ROOT/DEBIAN/md5sums"
chmod 0644 "$ROOT/DEBIAN/control" "$ROOT/DEBIAN/md5sums"
find "$ROOT" -type d -exec chmod 0755 {} +
find "$ROOT" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

DEB=gocryptfs_${DEBVERSION}_amd64.deb
dpkg-deb --root-owner-group -Zxz --build "$ROOT" "$DIST/$DEB" >/dev/null
echo "release.bash: built $DIST/$DEB"

(cd "$DIST" && find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%P\n' | sort | xargs sha256sum >SHA256SUMS)
echo "release.bash: $DIST/SHA256SUMS:"
cat "$DIST/SHA256SUMS"
