#!/bin/bash
#
# Compare this filesystem with a plain directory, with go-fuse's loopback
# example, with the same loopback tree with FUSE passthrough refused
# (tests/bench/loopback-nopassthrough: as root the example hands opened
# files to the kernel, whose reads and writes then never reach the daemon;
# without passthrough every READ and WRITE is a FUSE request, the path an
# encrypting filesystem must take), all on the same backing directory, and
# with a gocryptfs mount using -sharedstorage (no kernel caching at all):
#
#   streaming write of -s MiB (then fsync), streaming read of it (page cache
#   dropped first), 512-byte sequential writes of 8 MiB then fsync, one
#   writer of 4x-p MiB vs 4 writers on disjoint -p MiB regions of one file,
#   extracting a tar of the Go toolchain's src tree, sha256sum of that tree
#   (cold), ls -lR of it (cold), rm -rf of it;
#   then the resident memory of the FUSE daemons: idle after mounting (the
#   gocryptfs columns unlock a filesystem with the default scrypt cost),
#   after stat-ing -f files in 300 directories and idling, and per 10,000
#   inodes.
#
# Every column is mounted once; rounds are interleaved (round 1 of every
# column, then round 2, ...) and each cell is the median of the rounds.
#
# Usage (as root, so that the page cache can be dropped):
#   ./benchmark.bash [-d DIR] [-n ROUNDS] [-s MIB] [-p MIB] [-f FILES] [-- GOCRYPTFS_ARGS...]
#     -d DIR    backing directory (default /var/tmp/gocryptfs-bench); e.g.
#               a directory on tmpfs (/dev/shm/bench) so that the disk is not
#               the limit, or on ext4 for what a real disk gives
#     -n N      rounds (default 3)
#     -s MIB    size of the streaming test (default 1024)
#     -p MIB    region of each of the 4 parallel writers (default 64)
#     -f FILES  files for the RSS rows (default 60000, in 300 directories)
#   Arguments after -- go to both gocryptfs mounts (e.g. -- -nowritecache).
#
# Throughput rows are MB/s (higher is better), the others seconds or MiB
# (lower is better). "gc/loop" is gocryptfs relative to loopback: for MB/s
# the fraction of loopback's speed, for seconds how many times longer it
# took; "gc/nopt" is the same relative to loopback without passthrough.
# "shared/gc" is the cost of -sharedstorage (byte-range locks, no kernel
# caches) relative to the normal gocryptfs mount in the same way.

set -euo pipefail
cd "$(dirname "$0")"
export PATH="$PATH:/usr/local/go/bin"

W=${BENCH_DIR:-/var/tmp/gocryptfs-bench}
ROUNDS=3
MB=${BENCH_MB:-1024}
PAR_MB=64
FILES=60000
while getopts "d:n:s:p:f:h" opt; do
	case $opt in
	d) W=$OPTARG ;;
	n) ROUNDS=$OPTARG ;;
	s) MB=$OPTARG ;;
	p) PAR_MB=$OPTARG ;;
	f) FILES=$OPTARG ;;
	*)
		sed -n '3,/^$/p' "$0" | sed 's/^# \{0,1\}//'
		exit 2
		;;
	esac
done
shift $((OPTIND - 1))
EXTRA_ARGS=("$@")
GOSRC=${GOSRC:-$(go env GOROOT)/src}

mkdir -p "$W"
W=$(cd "$W" && pwd)
MOUNTS=()
cleanup() {
	for m in "${MOUNTS[@]}"; do
		mountpoint -q "$m" || continue
		fusermount3 -u "$m" 2>/dev/null || fusermount -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
}
trap cleanup EXIT

echo "== building gocryptfs and go-fuse's loopback example" >&2
./build.bash >/dev/null
go build -o "$W/loopback" github.com/hanwen/go-fuse/v2/example/loopback
go build -o "$W/loopback-nopt" ./tests/bench/loopback-nopassthrough

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
	for _ in $(seq 200); do
		mountpoint -q "$1" && return 0
		sleep 0.1
	done
	echo "mount at $1 did not appear" >&2
	exit 1
}
unmount() {
	fusermount3 -u "$1" 2>/dev/null || fusermount -u "$1"
}
# rss_mib PID: resident memory of PID in MiB.
rss_mib() { awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }

# mount_col COL BACKING MNT: mounts column COL (loopback, gocryptfs, shared)
# in the foreground in the background and sets PID.
mount_col() {
	local col=$1 backing=$2 mnt=$3
	mkdir -p "$mnt"
	case $col in
	loopback) "$W/loopback" "$mnt" "$backing" >/dev/null 2>&1 & ;;
	nopt) "$W/loopback-nopt" "$mnt" "$backing" & ;;
	gocryptfs) ./gocryptfs -q -fg -extpass "echo benchmark" "${EXTRA_ARGS[@]}" "$backing" "$mnt" & ;;
	shared) ./gocryptfs -q -fg -sharedstorage -extpass "echo benchmark" "${EXTRA_ARGS[@]}" "$backing" "$mnt" & ;;
	esac
	PID=$!
	MOUNTS+=("$mnt")
	wait_mounted "$mnt"
}

# new_cipher DIR [ARGS]: a fresh gocryptfs filesystem in DIR.
new_cipher() {
	local d=$1
	shift
	rm -rf "$d"
	mkdir -p "$d"
	./gocryptfs -q -init "$@" -extpass "echo benchmark" "$d" >/dev/null
}

# timed CMD...: seconds CMD took.
timed() {
	local t0 t1
	t0=$(now)
	"$@"
	t1=$(now)
	calc "$t1 - $t0"
}

par_writers() {
	local f=$1 i
	: >"$f"
	for i in 0 1 2 3; do
		dd if=/dev/zero of="$f" bs=1M count="$PAR_MB" seek=$((i * PAR_MB)) conv=notrunc,fdatasync status=none &
	done
	wait
}
sha_tree() { find "$1" -type f -print0 | xargs -0 sha256sum >/dev/null; }
untar() { tar -xf "$W/gosrc.tar" -C "$1" && sync; }
rm_tree() { rm -rf "${1:?}"/* && sync; }

# run_suite DIR prints the numbers of one round, in the order of NAMES.
run_suite() {
	local d=$1 t
	rm -rf "${d:?}"/*
	drop_caches
	t=$(timed dd if=/dev/zero of="$d/stream" bs=1M count="$MB" conv=fsync status=none)
	local wr rd small par1 par4
	wr=$(calc "$MB / $t")
	drop_caches
	t=$(timed dd if="$d/stream" of=/dev/null bs=1M status=none)
	rd=$(calc "$MB / $t")
	rm -f "$d/stream"
	t=$(timed dd if=/dev/zero of="$d/small" bs=512 count=16384 conv=fsync status=none)
	small=$(calc "8 / $t")
	rm -f "$d/small"
	t=$(timed dd if=/dev/zero of="$d/par" bs=1M count=$((4 * PAR_MB)) conv=fdatasync status=none)
	par1=$(calc "4 * $PAR_MB / $t")
	rm -f "$d/par"
	t=$(timed par_writers "$d/par")
	par4=$(calc "4 * $PAR_MB / $t")
	rm -f "$d/par"

	local untar_s sha ls_s rm_s
	drop_caches
	untar_s=$(timed untar "$d")
	drop_caches
	sha=$(timed sha_tree "$d")
	drop_caches
	ls_s=$(timed sh -c "ls -lR '$d' >/dev/null")
	rm_s=$(timed rm_tree "$d")
	echo "$wr $rd $small $par1 $par4 $untar_s $sha $ls_s $rm_s"
}

COLS=(plain loopback nopt gocryptfs shared)
declare -A DIR
echo "== mounting" >&2
mkdir -p "$W/plain" "$W/lo-orig" "$W/np-orig"
DIR[plain]=$W/plain
mount_col loopback "$W/lo-orig" "$W/lo-mnt"
DIR[loopback]=$W/lo-mnt
mount_col nopt "$W/np-orig" "$W/np-mnt"
DIR[nopt]=$W/np-mnt
new_cipher "$W/cipher" -scryptn 10
mount_col gocryptfs "$W/cipher" "$W/gc-mnt"
DIR[gocryptfs]=$W/gc-mnt
new_cipher "$W/cipher-shared" -scryptn 10
mount_col shared "$W/cipher-shared" "$W/sh-mnt"
DIR[shared]=$W/sh-mnt

mkdir -p "$W/results"
for r in $(seq "$ROUNDS"); do
	for c in "${COLS[@]}"; do
		echo "== round $r/$ROUNDS: $c" >&2
		run_suite "${DIR[$c]}" >"$W/results/$c.$r"
	done
done
for c in loopback nopt gocryptfs shared; do
	unmount "${DIR[$c]}"
done

# median COL FIELD: median over the rounds of field FIELD (1-based).
median() {
	local c=$1 f=$2 r
	for r in $(seq "$ROUNDS"); do
		awk -v f="$f" '{ print $f }' "$W/results/$c.$r"
	done | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Memory of the FUSE daemons (one measurement each; RSS does not depend on
# the load of the machine).
echo "== memory: idle mounts" >&2
declare -A IDLE TREE PER10K SPEEDUP
mount_col loopback "$W/lo-orig" "$W/lo-mnt"
sleep 2
IDLE[loopback]=$(rss_mib "$PID")
unmount "$W/lo-mnt"
new_cipher "$W/cipher-scrypt" # default scrypt cost, as users have it
for c in gocryptfs shared; do
	mount_col "$c" "$W/cipher-scrypt" "$W/rss-mnt"
	sleep 2
	IDLE[$c]=$(rss_mib "$PID")
	unmount "$W/rss-mnt"
done

echo "== memory: $FILES files in 300 directories" >&2
make_tree() {
	local d=$1 i per=$((FILES / 300))
	for i in $(seq 300); do
		mkdir "$d/d$i"
		(cd "$d/d$i" && seq "$per" | xargs touch)
	done
}
rm -rf "$W/lo-orig"/*
make_tree "$W/lo-orig"
# A cheap scrypt cost here: the baseline must not contain scrypt's
# garbage, which the Go runtime returns to the system at its own pace.
new_cipher "$W/cipher-tree" -scryptn 10
mount_col gocryptfs "$W/cipher-tree" "$W/rss-mnt"
make_tree "$W/rss-mnt"
unmount "$W/rss-mnt"
for c in loopback gocryptfs shared; do
	backing=$W/cipher-tree
	[[ $c == loopback ]] && backing=$W/lo-orig
	mount_col "$c" "$backing" "$W/rss-mnt"
	sleep 2
	base=$(rss_mib "$PID")
	find "$W/rss-mnt" -printf '%s\n' >/dev/null
	sleep 2
	TREE[$c]=$(rss_mib "$PID")
	PER10K[$c]=$(calc "(${TREE[$c]} - $base) * 10000 / $FILES")
	unmount "$W/rss-mnt"
done
rm -rf "$W/lo-orig"/*

NAMES=("write ${MB} MiB (MB/s)" "read ${MB} MiB cold (MB/s)" "512 B writes 8 MiB (MB/s)"
	"1 writer $((4 * PAR_MB)) MiB (MB/s)" "4 writers x${PAR_MB} MiB (MB/s)"
	"untar go/src (s)" "sha256 go/src cold (s)" "ls -lR go/src cold (s)" "rm -rf go/src (s)")
printf '\n%s; %s; backing %s (%s); median of %s rounds\n' "$(./gocryptfs -version | head -1)" \
	"$(uname -r), $(nproc) cores" "$W" "$(stat -f -c %T "$W")" "$ROUNDS"
H='| %-28s | %9s | %9s | %9s | %9s | %9s | %9s | %14s | %9s |\n'
printf "$H" test plain loopback "lo-nopt" gocryptfs "gc/loop" "gc/nopt" "-sharedstorage" "shared/gc"
printf '|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n' "------------------------------" "-----------" "-----------" "-----------" "-----------" "-----------" "-----------" "----------------" "-----------"
for i in "${!NAMES[@]}"; do
	f=$((i + 1))
	p=$(median plain $f)
	l=$(median loopback $f)
	n=$(median nopt $f)
	g=$(median gocryptfs $f)
	s=$(median shared $f)
	printf '| %-28s | %9.2f | %9.2f | %9.2f | %9.2f | %9.2f | %9.2f | %14.2f | %9.2f |\n' "${NAMES[$i]}" "$p" "$l" "$n" "$g" \
		"$(calc "$g / $l")" "$(calc "$g / $n")" "$s" "$(calc "$s / $g")"
done
for c in "${COLS[@]}"; do
	SPEEDUP[$c]=$(calc "$(median "$c" 5) / $(median "$c" 4)")
done
printf '| %-28s | %9.2f | %9.2f | %9.2f | %9.2f | %9s | %9s | %14.2f | %9s |\n' "4 writers / 1 writer" "${SPEEDUP[plain]}" "${SPEEDUP[loopback]}" "${SPEEDUP[nopt]}" "${SPEEDUP[gocryptfs]}" "" "" "${SPEEDUP[shared]}" ""
R='| %-28s | %9s | %9.1f | %9s | %9.1f | %9s | %9s | %14.1f | %9s |\n'
printf "$R" "RSS idle after mount (MiB)" - "${IDLE[loopback]}" - "${IDLE[gocryptfs]}" "" "" "${IDLE[shared]}" ""
printf "$R" "RSS after stat $FILES (MiB)" - "${TREE[loopback]}" - "${TREE[gocryptfs]}" "" "" "${TREE[shared]}" ""
printf "$R" "RSS per 10,000 inodes (MiB)" - "${PER10K[loopback]}" - "${PER10K[gocryptfs]}" "" "" "${PER10K[shared]}" ""
