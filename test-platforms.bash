#!/bin/bash
#
# The checks for systems other than linux/amd64, run by test.bash:
#
#  - darwin/amd64 and freebsd/amd64 (CGO_ENABLED=0): go vet, go build of
#    the two binaries and go test -c of every package that is meant to
#    build there (all but the ones listed below; on darwin that includes
#    the FUSE frontends and the mount command). Nothing is run: there is
#    no macOS or FreeBSD machine here.
#  - linux/arm64 (CGO_ENABLED=0): go vet of every package; the unit tests of the crypto, content,
#    name and config packages and the reference vectors, run under qemu
#    user emulation (Debian's qemu-user), so that Go's arm64 assembly of
#    AES-GCM (AES and PMULL instructions) and ChaCha20 (NEON) is checked
#    against the vectors. Each package runs a second time with the AES
#    instructions hidden from Go's crypto (GODEBUG), i.e. on the generic
#    code, so both paths must agree with the vectors.

set -euo pipefail
cd "$(dirname "$0")"
export PATH="$PATH:/usr/local/go/bin"

# Linux only: the end-to-end tests that mount (they drive Linux's FUSE).
# The FUSE frontends build on darwin (macFUSE, with the options that need
# Linux refused: mount_darwin.go), not on FreeBSD, where the mount command
# refuses (mount_other.go). The frontends' own mount tests are Linux only
# (//go:build linux in their files); go test -c compiles the rest.
linux_only=(
	gocryptfs/tests/hostile
	gocryptfs/tests/interop
)
not_freebsd=(
	gocryptfs/internal/fusefrontend
	gocryptfs/internal/fusefrontend_reverse
)
pkgs_darwin=$(go list ./... | grep -vxF -f <(printf '%s\n' "${linux_only[@]}"))
pkgs_freebsd=$(grep -vxF -f <(printf '%s\n' "${not_freebsd[@]}") <<<"$pkgs_darwin")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for os in darwin freebsd; do
	echo "-- $os/amd64: go vet, go build, go test -c"
	pkgs_var=pkgs_$os
	pkgs=${!pkgs_var}
	export GOOS=$os GOARCH=amd64 CGO_ENABLED=0
	go vet $pkgs
	go build -o "$tmp/" . ./gocryptfs-xray
	go test -c -o "$tmp/$os/" $pkgs >/dev/null
	unset GOOS GOARCH CGO_ENABLED
done
echo "   (darwin and freebsd: ${SECONDS}s)"
SECONDS=0

# Package directory, then extra test flags; all run with -test.short.
# contentenc's allocation tests run many 1 MiB operations and take minutes
# under emulation; they say nothing about the arm64 code paths.
arm64=(
	"internal/cryptocore"
	"internal/stupidgcm"
	"internal/contentenc -test.skip=^TestAllocs"
	"internal/nametransform"
	"internal/configfile"
	"tests/vectors"
)
# Run again on Go's generic AES code (the vector tests only).
generic=(
	"internal/cryptocore"
	"internal/stupidgcm"
	"internal/contentenc -test.run=Vectors|TV|ReferenceExamples|AAD"
	"tests/vectors"
)
if ! command -v qemu-aarch64 >/dev/null; then
	echo "qemu-aarch64 not found (Debian package qemu-user)" >&2
	exit 1
fi
# runArm64 DIR [FLAGS] runs the arm64 test binary of DIR in DIR (the tests
# find their testdata relative to it), with the environment of the caller.
runArm64() {
	local dir=$1
	shift
	(cd "$dir" && qemu-aarch64 "$tmp/arm64/$(basename "$dir").test" -test.count=1 -test.short "$@" >"$tmp/out" 2>&1) ||
		{ cat "$tmp/out"; return 1; }
}
echo "-- linux/arm64: go vet of every package"
GOARCH=arm64 CGO_ENABLED=0 go vet ./...
for entry in "${arm64[@]}"; do
	read -r dir flags <<<"$entry"
	echo "-- linux/arm64 under qemu: $dir"
	GOARCH=arm64 CGO_ENABLED=0 go test -c -o "$tmp/arm64/$(basename "$dir").test" "./$dir"
	# shellcheck disable=SC2086
	GOCRYPTFS_TEST_ARM64_ASM=1 runArm64 "$dir" $flags
done
for entry in "${generic[@]}"; do
	read -r dir flags <<<"$entry"
	echo "-- linux/arm64 under qemu, generic AES code (GODEBUG=cpu.aes=off,cpu.pmull=off): $dir"
	# shellcheck disable=SC2086
	GODEBUG=cpu.aes=off,cpu.pmull=off runArm64 "$dir" $flags
done
echo "   (linux/arm64: ${SECONDS}s)"
echo "test-platforms.bash: all passed"
