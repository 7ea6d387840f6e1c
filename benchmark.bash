#!/bin/bash
#
# Compare this filesystem with a plain directory and with go-fuse's loopback
# example (the cost of FUSE alone), on the same disk:
#
#   streaming write of BENCH_MB MiB (default 1024), streaming read of it
#   (page cache dropped first), extracting a tar of the Go toolchain's src
#   tree, checksumming that tree, ls -lR of it, rm -rf of it.
#
# Usage (as root, so that the page cache can be dropped):
#   ./benchmark.bash                 # everything, prints a table
#   BENCH_MB=256 ./benchmark.bash    # smaller streaming test
#   BENCH_DIR=/mnt/ssd/bench ./benchmark.bash
#   ./benchmark.bash -openssl=false  # extra arguments go to the gocryptfs mount
#
# Streaming rows are MB/s (higher is better), the others seconds (lower is
# better). The gocryptfs/loopback column is gocryptfs relative to loopback:
# for MB/s the fraction of loopback's speed, for seconds how many times
# longer it took. The -sharedstorage column is a second gocryptfs mount
# with -sharedstorage (byte-range locks, no caches), "shared/gc" its cost
# relative to the normal mount in the same way.

set -euo pipefail
cd "$(dirname "$0")"
export PATH="$PATH:/usr/local/go/bin"

MB=${BENCH_MB:-1024}
W=${BENCH_DIR:-/var/tmp/gocryptfs-bench}
GOSRC=${GOSRC:-$(go env GOROOT)/src}
EXTRA_ARGS=("$@")

mkdir -p "$W"
W=$(cd "$W" && pwd)
MOUNTS=()
cleanup() {
	for m in "${MOUNTS[@]}"; do
		fusermount3 -u "$m" 2>/dev/null || fusermount -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
}
trap cleanup EXIT

echo "== building gocryptfs and go-fuse's loopback example" >&2
./build.bash >/dev/null
go build -o "$W/loopback" github.com/hanwen/go-fuse/v2/example/loopback

if [[ ! -f $W/gosrc.tar ]]; then
	echo "== creating $W/gosrc.tar from $GOSRC" >&2
	tar -C "$(dirname "$GOSRC")" -cf "$W/gosrc.tar" "$(basename "$GOSRC")"
fi

now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.6f\", $1 }"; }
drop_caches() {
	sync
	if [[ -w /proc/sys/vm/drop_caches ]]; then
		echo 3 >/proc/sys/vm/drop_caches
	fi
}
wait_mounted() {
	for _ in $(seq 100); do
		mountpoint -q "$1" && return 0
		sleep 0.1
	done
	echo "mount at $1 did not appear" >&2
	exit 1
}

# run_suite DIR prints six numbers: write MB/s, read MB/s, untar s, md5 s, ls s, rm s
run_suite() {
	local d=$1 t0 t1
	rm -rf "${d:?}"/*
	drop_caches
	t0=$(now)
	dd if=/dev/zero of="$d/stream" bs=1M count="$MB" conv=fsync status=none
	t1=$(now)
	local wr rd
	wr=$(calc "$MB / ($t1 - $t0)")
	drop_caches
	t0=$(now)
	dd if="$d/stream" of=/dev/null bs=1M status=none
	t1=$(now)
	rd=$(calc "$MB / ($t1 - $t0)")
	rm -f "$d/stream"

	local untar md5 ls rm_
	drop_caches
	t0=$(now); tar -xf "$W/gosrc.tar" -C "$d"; sync; t1=$(now)
	untar=$(calc "$t1 - $t0")
	drop_caches
	t0=$(now); find "$d" -type f -print0 | xargs -0 md5sum >/dev/null; t1=$(now)
	md5=$(calc "$t1 - $t0")
	drop_caches
	t0=$(now); ls -lR "$d" >/dev/null; t1=$(now)
	ls=$(calc "$t1 - $t0")
	t0=$(now); rm -rf "${d:?}"/*; sync; t1=$(now)
	rm_=$(calc "$t1 - $t0")
	echo "$wr $rd $untar $md5 $ls $rm_"
}

echo "== plain directory" >&2
mkdir -p "$W/plain"
read -r -a PLAIN <<<"$(run_suite "$W/plain")"

echo "== go-fuse loopback" >&2
mkdir -p "$W/lo-orig" "$W/lo-mnt"
"$W/loopback" "$W/lo-mnt" "$W/lo-orig" >/dev/null 2>&1 &
MOUNTS+=("$W/lo-mnt")
wait_mounted "$W/lo-mnt"
read -r -a LOOP <<<"$(run_suite "$W/lo-mnt")"
fusermount3 -u "$W/lo-mnt" 2>/dev/null || fusermount -u "$W/lo-mnt"

echo "== gocryptfs" >&2
rm -rf "$W/cipher"
mkdir -p "$W/cipher" "$W/gc-mnt"
./gocryptfs -q -init -scryptn 10 -extpass "echo benchmark" "$W/cipher" >/dev/null
./gocryptfs -q -extpass "echo benchmark" "${EXTRA_ARGS[@]}" "$W/cipher" "$W/gc-mnt"
MOUNTS+=("$W/gc-mnt")
read -r -a GC <<<"$(run_suite "$W/gc-mnt")"
fusermount3 -u "$W/gc-mnt" 2>/dev/null || fusermount -u "$W/gc-mnt"

echo "== gocryptfs -sharedstorage" >&2
rm -rf "$W/cipher"
mkdir -p "$W/cipher"
./gocryptfs -q -init -scryptn 10 -extpass "echo benchmark" "$W/cipher" >/dev/null
./gocryptfs -q -extpass "echo benchmark" -sharedstorage "${EXTRA_ARGS[@]}" "$W/cipher" "$W/gc-mnt"
read -r -a SH <<<"$(run_suite "$W/gc-mnt")"
fusermount3 -u "$W/gc-mnt" 2>/dev/null || fusermount -u "$W/gc-mnt"

NAMES=("write ${MB} MiB (MB/s)" "read ${MB} MiB (MB/s)" "untar go/src (s)" "md5sum go/src (s)" "ls -lR go/src (s)" "rm -rf go/src (s)")
printf '\n%s; %s\n' "$(./gocryptfs -version)" "$(uname -r), $(nproc) cores"
printf '| %-22s | %9s | %9s | %9s | %-16s | %14s | %9s |\n' test plain loopback gocryptfs "gocryptfs/loopback" "-sharedstorage" "shared/gc"
printf '|%s|%s|%s|%s|%s|%s|%s|\n' "------------------------" "-----------" "-----------" "-----------" "--------------------" "----------------" "-----------"
for i in "${!NAMES[@]}"; do
	ratio=$(calc "${GC[$i]} / ${LOOP[$i]}")
	sratio=$(calc "${SH[$i]} / ${GC[$i]}")
	printf '| %-22s | %9.2f | %9.2f | %9.2f | %16.2f | %14.2f | %9.2f |\n' "${NAMES[$i]}" "${PLAIN[$i]}" "${LOOP[$i]}" "${GC[$i]}" "$ratio" "${SH[$i]}" "$sratio"
done
