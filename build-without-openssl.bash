#!/bin/bash
#
# Build gocryptfs without OpenSSL: the tag without_openssl leaves out the
# cgo/libcrypto backends of internal/stupidgcm (stupidgcm.Available is then
# false, and auto mode always picks Go's ciphers). Extra arguments are passed
# to "go build" for the binary, e.g. -ldflags or -o.
#
# Usage: ./build-without-openssl.bash [go build flags...]

set -euo pipefail
cd "$(dirname "$0")"

# Compile every package, so that a file that wrongly needs OpenSSL fails here
# even if it is not linked into the binary.
go build -tags without_openssl ./...

if [[ "$(go list -f '{{.Name}}' . 2>/dev/null || true)" == main ]]; then
	go build -tags without_openssl -o gocryptfs "$@" .
	if command -v ldd >/dev/null && ldd gocryptfs 2>/dev/null | grep -q libcrypto; then
		echo "build-without-openssl.bash: gocryptfs still links libcrypto" >&2
		exit 1
	fi
	echo "built ./gocryptfs without OpenSSL"
else
	echo "no main package in the repository root yet; all packages compiled without OpenSSL"
fi
