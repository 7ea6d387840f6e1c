#!/bin/bash
#
# The project's test suite; .ci/run runs exactly this. It installs missing
# Debian packages (install-deps.bash --test), then runs go vet, a gofmt check,
# staticcheck, all tests in the default build, the tests that need the test
# hooks (-tags testhooks), the concurrent packages under -race, all tests
# in the without_openssl build, checks that a CGO_ENABLED=0 build
# compiles, and builds, installs, uses and removes the Debian package
# (tests/package/check.bash). Tests that mount need /dev/fuse and root
# (they skip without).
#
# Every FUSE test runs on both transports: where the kernel has FUSE over
# io_uring, the default-build, test-hook and -race passes run with it
# enabled (mounts use -uring=auto, so io_uring) and the without_openssl
# pass with it disabled (/dev/fuse). The module parameter is restored on
# every exit path.

set -euo pipefail
cd "$(dirname "$0")"
export PATH="$PATH:/usr/local/go/bin"

./install-deps.bash --test
# qemu-aarch64 for the linux/arm64 unit tests of test-platforms.bash.
command -v qemu-aarch64 >/dev/null || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q qemu-user; }

# Restored on exit, in reverse order of setting up.
cleanups=()
on_exit() {
	local i
	for ((i = ${#cleanups[@]} - 1; i >= 0; i--)); do eval "${cleanups[i]}" || true; done
}
trap on_exit EXIT

# The tests that abort a FUSE connection (a hung request, umount -f) write
# /sys/fs/fuse/connections/N/abort. systemd mounts fusectl there at boot;
# a machine without systemd (CI's) has nothing there. testutil.ConnAbort
# mounts it where needed; mounted here first, it is also unmounted at the
# end, leaving the machine as it was.
fusectl=/sys/fs/fuse/connections
if [[ -d $fusectl ]] && ! mountpoint -q "$fusectl" && mount -t fusectl fusectl "$fusectl" 2>/dev/null; then
	cleanups+=("umount $fusectl")
fi

uring_param=/sys/module/fuse/parameters/enable_uring
if [[ -e $uring_param && -w $uring_param ]]; then
	uring_orig=$(cat "$uring_param")
	cleanups+=('echo "$uring_orig" > "$uring_param"')
	transport() {
		echo "$1" >"$uring_param"
		echo "   (FUSE transport of this pass: $2)"
	}
else
	echo "no writable $uring_param (kernel without FUSE over io_uring, or not root): every pass on /dev/fuse" >&2
	transport() { echo "   (FUSE transport of this pass: /dev/fuse)"; }
fi

echo "== go vet"
go vet ./...

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [[ -n $unformatted ]]; then
	echo "gofmt needed on:" >&2
	echo "$unformatted" >&2
	exit 1
fi

echo "== staticcheck"
# Pinned; fetched from the Go module proxy. A machine that cannot reach the
# proxy skips this step instead of failing the whole run.
if GOFLAGS= GOBIN="$PWD/.bin" go install honnef.co/go/tools/cmd/staticcheck@v0.8.2; then
	./.bin/staticcheck ./...
else
	echo "staticcheck could not be installed, skipped" >&2
fi

echo "== go test (default build, with OpenSSL)"
transport Y io_uring
go test -count=1 -timeout 8m ./...

echo "== go test -tags testhooks (the tests that need the test hooks)"
# The hooks do not ship (internal/fusefrontend/hooks.go); the tests that
# use them are in files built only with -tags testhooks. Run exactly those
# tests, found by their build line, in that build.
hookfiles=$(grep -rl --include='*_test.go' '^//go:build testhooks$' internal)
hookpkgs=$(for f in $hookfiles; do echo "./$(dirname "$f")/"; done | sort -u)
hooktests=$(grep -ho '^func Test[A-Za-z0-9_]*' $hookfiles | sed 's/^func //' | sort -u | paste -sd'|')
go vet -tags testhooks $hookpkgs
if [[ -x ./.bin/staticcheck ]]; then
	./.bin/staticcheck -tags testhooks $hookpkgs
fi
go test -count=1 -timeout 8m -tags testhooks -run "^($hooktests)\$" $hookpkgs

echo "== go test -race (the packages with the most concurrency)"
go test -count=1 -timeout 15m -race ./internal/contentio/ ./internal/fusefrontend/ ./internal/fuseserve/ ./internal/repair/

echo "== fuzz (bounded: the parsers of what CIPHERDIR holds)"
# Each target's seed corpus already runs in the go test steps; here each
# is fuzzed for a fixed number of inputs (about 10 s each here). Not for
# a fixed time: with -fuzztime DURATION, Go before 1.27 can fail a target
# with a bare "context deadline exceeded" when a worker is still busy as
# the time runs out (go.dev/issue/75804; seen in CI on FuzzKeySlots,
# whose every input runs a KDF). -timeout bounds a run whose fuzzing
# stalls. -fuzz must match one target per run.
fuzz=(
	"FuzzConflictName ./internal/conflictname/ 100000x"
	"FuzzKeySlots ./internal/configfile/ 2000x"
	"FuzzParse ./internal/configfile/ 20000x"
	"FuzzJournal ./internal/repair/ 150000x"
)
for f in "${fuzz[@]}"; do
	read -r name pkg count <<<"$f"
	go test -run '^$' -fuzz "^${name}\$" -fuzztime "$count" -timeout 4m "$pkg"
done

echo "== go test -tags without_openssl"
transport N /dev/fuse
go test -count=1 -timeout 8m -tags without_openssl ./...

echo "== CGO_ENABLED=0 build"
CGO_ENABLED=0 go build -o /dev/null .
CGO_ENABLED=0 go vet ./... >/dev/null

echo "== other platforms: darwin and freebsd (vet and compile only), linux/arm64 (unit tests under qemu)"
./test-platforms.bash

echo "== Debian package"
# Builds the .deb (release.bash --deb-only), installs, uses, removes it.
# It runs in a private mount namespace over copy-on-write /usr, /etc and
# /var, so the reference /usr/bin/gocryptfs of the tests above (Debian's
# package, which ours replaces) stays on the machine; see the script.
tests/package/check.bash

echo "test.bash: all tests passed"
