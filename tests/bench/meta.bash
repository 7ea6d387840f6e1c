#!/bin/bash
#
# Metadata benchmark: ls -lR, find and rm -rf of an untarred Go src tree,
# gocryptfs next to go-fuse's loopback example (the FUSE limit), both on
# the same backing directory type. Prints seconds and the ratio
# gocryptfs/loopback (lower is better). With META_STRACE=1 it also prints
# the system call counts of the gocryptfs daemon during ls -lR and rm -rf
# (strace -f -c; timings of that run are meaningless).
#
# Usage (as root): tests/bench/meta.bash [-d DIR] [-b GOCRYPTFS] [extra mount args]
#   -d DIR        backing directory (default: /dev/shm/gocryptfs-meta-bench,
#                 a tmpfs); each run works in a fresh subdirectory
#   -b GOCRYPTFS  binary to measure (default: ./gocryptfs, built first)
#   ROUNDS=3 interleaved rounds (the median is reported)

set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PATH:/usr/local/go/bin"

W="" BIN=""
while [[ $# -gt 0 ]]; do
	case $1 in
	-d) W=$2; shift 2 ;;
	-b) BIN=$(realpath "$2"); shift 2 ;;
	*) break ;;
	esac
done
EXTRA_ARGS=("$@")
ROUNDS=${ROUNDS:-3}
GOSRC=${GOSRC:-$(go env GOROOT)/src}
if [[ -z $W ]]; then
	W=/dev/shm/gocryptfs-meta-bench # tmpfs
fi
mkdir -p "$W"
W=$(mktemp -d "$(realpath "$W")/meta.XXXXXX")
MOUNTS=()
cleanup() {
	for m in "${MOUNTS[@]}"; do
		fusermount3 -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
	rm -rf "$W" 2>/dev/null || true
}
trap cleanup EXIT

if [[ -z $BIN ]]; then
	./build.bash >/dev/null
	BIN=$PWD/gocryptfs
fi
go build -o "$W/loopback" github.com/hanwen/go-fuse/v2/example/loopback
tar -C "$(dirname "$GOSRC")" -cf "$W/gosrc.tar" "$(basename "$GOSRC")"

now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.3f\", $1 }"; }
drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
wait_mounted() {
	for _ in $(seq 100); do
		mountpoint -q "$1" && return 0
		sleep 0.1
	done
	echo "mount at $1 did not appear" >&2
	exit 1
}

mkdir -p "$W/lo-orig" "$W/lo-mnt" "$W/cipher" "$W/gc-mnt"
"$W/loopback" "$W/lo-mnt" "$W/lo-orig" >/dev/null 2>&1 &
MOUNTS+=("$W/lo-mnt")
wait_mounted "$W/lo-mnt"
"$BIN" -q -init -scryptn 10 -extpass "echo benchmark" "$W/cipher" >/dev/null
"$BIN" -q -extpass "echo benchmark" "${EXTRA_ARGS[@]}" "$W/cipher" "$W/gc-mnt"
MOUNTS+=("$W/gc-mnt")
GCPID=$(pgrep -n -f -- "$W/gc-mnt" || true)
if [[ -z $GCPID ]]; then echo "gocryptfs daemon not found" >&2; exit 1; fi

# one MNT prints: ls-lR find rm-rf seconds
one() {
	local d=$1 t0 t1 ls fi rm_
	tar -xf "$W/gosrc.tar" -C "$d"
	drop
	t0=$(now); ls -lR "$d" >/dev/null; t1=$(now); ls=$(calc "$t1 - $t0")
	drop
	t0=$(now); find "$d" >/dev/null; t1=$(now); fi=$(calc "$t1 - $t0")
	drop
	t0=$(now); rm -rf "${d:?}"/*; t1=$(now); rm_=$(calc "$t1 - $t0")
	echo "$ls $fi $rm_"
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

declare -A R
for r in $(seq "$ROUNDS"); do
	read -r a b c <<<"$(one "$W/lo-mnt")"
	R[lo,ls]+="$a "; R[lo,find]+="$b "; R[lo,rm]+="$c "
	read -r a b c <<<"$(one "$W/gc-mnt")"
	R[gc,ls]+="$a "; R[gc,find]+="$b "; R[gc,rm]+="$c "
	echo "round $r done" >&2
done
printf '| %-10s | %9s | %9s | %8s |\n' test loopback gocryptfs ratio
for t in ls find rm; do
	lo=$(tr ' ' '\n' <<<"${R[lo,$t]}" | grep . | median)
	gc=$(tr ' ' '\n' <<<"${R[gc,$t]}" | grep . | median)
	printf '| %-10s | %9.3f | %9.3f | %8.2f |\n' "$t" "$lo" "$gc" "$(calc "$gc / $lo")"
done

if [[ ${META_STRACE:-0} == 1 ]]; then
	d=$W/gc-mnt
	tar -xf "$W/gosrc.tar" -C "$d"
	drop
	for step in "ls -lR" "rm -rf"; do
		strace -f -c -o "$W/strace.out" -p "$GCPID" &
		sp=$!
		sleep 1
		if [[ $step == "ls -lR" ]]; then ls -lR "$d" >/dev/null; else rm -rf "${d:?}"/*; fi
		sleep 0.5
		kill -INT "$sp"
		wait "$sp" || true
		echo "== backing system calls of the daemon during $step"
		# futex/nanosleep/epoll/FUSE device traffic are the Go runtime
		# and the kernel channel; the rest is work on CIPHERDIR.
		awk 'NR>2 && $NF!="total" && $NF!~/^-/ {print $(NF), ($5 ~ /^[0-9]+$/ && NF==6) ? $4 : $4}' "$W/strace.out" |
			sort -k2 -n -r | awk '{printf "  %-16s %s\n", $1, $2}'
		tail -1 "$W/strace.out"
	done
fi
