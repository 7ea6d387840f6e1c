#!/bin/bash
#
# Set-up and demo: installs the missing packages gocryptfs needs to build
# and run (./install-deps.bash without --test: fuse3, gcc, libc6-dev,
# libssl-dev; nothing the test suite alone needs), builds gocryptfs, creates an
# encrypted directory, mounts it, writes a file and shows the plaintext
# next to the ciphertext, then unmounts. Everything happens in a fresh
# temporary directory, which is removed at the end.

set -euo pipefail
cd "$(dirname "$0")"
export PATH="$PATH:/usr/local/go/bin"

./install-deps.bash
./build.bash

DEMO=$(mktemp -d /tmp/gocryptfs-demo.XXXXXX)
cleanup() {
	fusermount3 -u "$DEMO/plain" 2>/dev/null || true
	rm -rf "$DEMO"
}
trap cleanup EXIT
mkdir "$DEMO/cipher" "$DEMO/plain"
echo "correct horse battery staple" >"$DEMO/password"

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

step ./gocryptfs -init -passfile "$DEMO/password" "$DEMO/cipher"
step ./gocryptfs -passfile "$DEMO/password" "$DEMO/cipher" "$DEMO/plain"
echo 'Hello, encrypted world!' >"$DEMO/plain/hello.txt"
mkdir "$DEMO/plain/photos"
step ls -la "$DEMO/plain"
step cat "$DEMO/plain/hello.txt"
echo
echo "The same files as stored on disk (names and contents encrypted):"
step ls -la "$DEMO/cipher"
for f in "$DEMO"/cipher/*; do
	case "$(basename "$f")" in gocryptfs.conf | gocryptfs.diriv) continue ;; esac
	[[ -f $f ]] && step od -A d -t x1 "$f" | head -5
done
step fusermount3 -u "$DEMO/plain"
echo
echo "Unmounted; the plaintext view is gone:"
step ls -la "$DEMO/plain"
