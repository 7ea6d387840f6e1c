#!/bin/bash
#
# Install what ./build.bash built, with the man pages:
#   gocryptfs, gocryptfs-xray   -> $DESTDIR$PREFIX/bin
#   docs/man/*.1                -> $DESTDIR$PREFIX/share/man/man1
# PREFIX defaults to /usr/local; DESTDIR (empty by default) is for staging
# into a package root.

set -euo pipefail
cd "$(dirname "$0")"

PREFIX=${PREFIX:-/usr/local}
BINDIR="${DESTDIR:-}$PREFIX/bin"
MANDIR="${DESTDIR:-}$PREFIX/share/man/man1"

if [[ ! -x gocryptfs ]]; then
	echo "install.bash: ./gocryptfs not found, run ./build.bash first" >&2
	exit 1
fi
install -d "$BINDIR" "$MANDIR"
install -m 0755 gocryptfs "$BINDIR/"
if [[ -x gocryptfs-xray/gocryptfs-xray ]]; then
	install -m 0755 gocryptfs-xray/gocryptfs-xray "$BINDIR/"
fi
install -m 0644 docs/man/gocryptfs.1 docs/man/gocryptfs-xray.1 "$MANDIR/"
echo "installed into $BINDIR and $MANDIR"
