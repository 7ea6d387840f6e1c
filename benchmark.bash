#!/bin/bash
#
# Compare this filesystem on both FUSE transports with a plain directory,
# with go-fuse's loopback example, with the same loopback tree with FUSE
# passthrough refused (tests/bench/loopback-nopassthrough: as root the
# example hands opened files to the kernel, whose reads and writes then
# never reach the daemon; without passthrough every READ and WRITE is a
# FUSE request, the path an encrypting filesystem must take) served over
# /dev/fuse and over io_uring, with a mount using -sharedstorage (no kernel
# caching at all) and with the reference gocryptfs (/usr/bin/gocryptfs,
# Debian's 2.3), all on the same backing directory:
#
#   streaming write of -s MiB (then fsync), streaming read of it (page cache
#   dropped first), 512-byte sequential writes of 8 MiB then fsync, one
#   writer of 4x-p MiB vs 4 writers on disjoint -p MiB regions of one file,
#   extracting a tar of the Go toolchain's src tree, sha256sum of that tree
#   (cold), ls -lR of it (cold), rm -rf of it, and the CPU time (user+sys)
#   the FUSE daemon spent on the untar;
#   then the resident memory of the FUSE daemons: idle after mounting (the
#   gocryptfs columns unlock a filesystem with the default scrypt cost),
#   after stat-ing -f files in 300 directories and idling, and per 10,000
#   inodes.
#
# Columns: plain, loopback (go-fuse's example, passthrough on), lo-nopt
# (passthrough off, go-fuse's /dev/fuse loop: the limit of the classic
# transport), lo-uring (the same tree over our io_uring transport: the
# limit of FUSE over io_uring), gc-dev and gc-uring (this filesystem over
# /dev/fuse and over io_uring), -sharedstorage (over /dev/fuse) and ref-2.3
# (the reference gocryptfs). The io_uring columns need
# /sys/module/fuse/parameters/enable_uring (kernel >= 6.14 with
# CONFIG_FUSE_IO_URING) and root: the script sets it to Y while it mounts
# them (the kernel offers io_uring at FUSE INIT only then; a connection
# keeps it), to N while it mounts this filesystem for the /dev/fuse columns
# if the binary has no -uring flag, and restores the old value right after
# each mount and on exit. Without the parameter the io_uring columns are
# left out, without /usr/bin/gocryptfs the reference column, with a note.
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
#   Arguments after -- go to this filesystem's mounts (gc-dev, gc-uring,
#   -sharedstorage; e.g. -- -nowritecache), not to the reference.
#   GOSRC=DIR untars DIR instead of $(go env GOROOT)/src (the tar is cached
#   in DIR/gosrc.tar of the backing directory).
#
# Throughput rows are MB/s (higher is better), the others seconds or MiB
# (lower is better). The second table holds ratios of the medians: "A/B" is
# column A's value divided by column B's (for MB/s the fraction of B's
# speed, for seconds how many times longer A took), gc meaning gc-dev;
# "gcu vs ref" is how many times faster gc-uring is than the reference (for
# seconds the reference's time divided by gc-uring's, for MB/s gc-uring's
# speed divided by the reference's). Last, the goals of issue 20 are
# checked against these numbers.

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
REF=/usr/bin/gocryptfs
UPARAM=/sys/module/fuse/parameters/enable_uring

mkdir -p "$W"
W=$(cd "$W" && pwd)
MOUNTS=() DAEMONS=()
UORIG="" # enable_uring as we found it, once we changed it
# uring_param Y|N sets the kernel parameter (the old value is put back by
# uring_restore and on exit).
uring_param() {
	[[ -z $UORIG ]] && UORIG=$(cat "$UPARAM")
	echo "$1" >"$UPARAM"
}
uring_restore() {
	[[ -n $UORIG ]] && echo "$UORIG" >"$UPARAM"
	UORIG=""
}
cleanup() {
	local m p
	for m in "${MOUNTS[@]}"; do
		mountpoint -q "$m" || continue
		fusermount3 -u "$m" 2>/dev/null || fusermount -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
	# A daemon whose mount never appeared (or did not go away): ours only
	# while it is still our child.
	for p in "${DAEMONS[@]}"; do
		if [[ $(awk '{ print $4 }' "/proc/$p/stat" 2>/dev/null) == "$$" ]]; then
			kill "$p" 2>/dev/null || true
		fi
	done
	uring_restore || echo "benchmark.bash: could not restore $UPARAM to $UORIG" >&2
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Which columns can run.
NOTES=()
URING=1
if [[ ! -e $UPARAM ]]; then
	URING=0
	NOTES+=("no lo-uring/gc-uring columns: this kernel has no FUSE over io_uring ($UPARAM missing)")
elif [[ ! -w $UPARAM ]]; then
	URING=0
	NOTES+=("no lo-uring/gc-uring columns: $UPARAM is not writable (run as root)")
fi
HAVE_REF=1
if [[ ! -x $REF ]]; then
	HAVE_REF=0
	NOTES+=("no ref-2.3 column: $REF is missing (./install-deps.bash --test installs Debian's gocryptfs)")
fi

echo "== building gocryptfs and go-fuse's loopback example" >&2
./build.bash >/dev/null
go build -o "$W/loopback" github.com/hanwen/go-fuse/v2/example/loopback
go build -o "$W/loopback-nopt" ./tests/bench/loopback-nopassthrough
# This filesystem's transport: -uring if the binary has it, else the kernel
# parameter that its default (auto) follows.
GC_DEV_ARGS=() GC_URING_ARGS=()
# (Captured first: under pipefail, grep -q ending the pipe early would
# count as a failure of gocryptfs.)
HELP=$(./gocryptfs -hh 2>&1 || true)
if [[ $HELP == *-uring* ]]; then
	GC_DEV_ARGS=(-uring=false) GC_URING_ARGS=(-uring=true)
elif [[ $URING == 0 && $(cat "$UPARAM" 2>/dev/null) == Y ]]; then
	echo "benchmark.bash: ./gocryptfs has no -uring flag and $UPARAM is Y but not writable: cannot mount gc-dev over /dev/fuse" >&2
	exit 1
fi

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
# wait_mounted MNT [PID]: waits until MNT is a mount point; fails early if
# the daemon PID exited.
wait_mounted() {
	for _ in $(seq 200); do
		mountpoint -q "$1" && return 0
		if [[ -n ${2:-} ]] && ! kill -0 "$2" 2>/dev/null; then
			echo "mount at $1: the daemon exited" >&2
			exit 1
		fi
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
# cpu_ticks PID: user+sys clock ticks of all threads of PID so far.
cpu_ticks() { sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }
TICK=$(getconf CLK_TCK)
# uring_fds PID: how many io_uring instances PID holds (our transport has
# one per ring entry; go-fuse's /dev/fuse loop none).
uring_fds() { find "/proc/$1/fd" -lname 'anon_inode:\[io_uring\]' 2>/dev/null | wc -l; }
# wait_rings PID COL: waits until PID has registered its ring entries.
wait_rings() {
	for _ in $(seq 100); do
		(($(uring_fds "$1") > 0)) && return 0
		sleep 0.1
	done
	echo "$2: the daemon holds no io_uring after 10 s: not on the io_uring transport" >&2
	exit 1
}

# mount_col COL BACKING MNT: mounts column COL (see COLS) in the
# foreground in the background and sets PID.
mount_col() {
	local col=$1 backing=$2 mnt=$3
	mkdir -p "$mnt"
	case $col in
	louring | gcuring) uring_param Y ;;
	gcdev | shared) ((${#GC_DEV_ARGS[@]})) || uring_param N ;;
	esac
	case $col in
	loopback) "$W/loopback" "$mnt" "$backing" >/dev/null 2>&1 & ;;
	nopt) "$W/loopback-nopt" "$mnt" "$backing" & ;;
	louring) "$W/loopback-nopt" -uring "$mnt" "$backing" 2>>"$W/lo-uring.log" & ;;
	gcdev) ./gocryptfs -q -fg "${GC_DEV_ARGS[@]}" -extpass "echo benchmark" "${EXTRA_ARGS[@]}" "$backing" "$mnt" & ;;
	gcuring) ./gocryptfs -q -fg "${GC_URING_ARGS[@]}" -extpass "echo benchmark" "${EXTRA_ARGS[@]}" "$backing" "$mnt" & ;;
	shared) ./gocryptfs -q -fg "${GC_DEV_ARGS[@]}" -sharedstorage -extpass "echo benchmark" "${EXTRA_ARGS[@]}" "$backing" "$mnt" & ;;
	ref) "$REF" -q -fg -extpass "echo benchmark" "$backing" "$mnt" & ;;
	esac
	PID=$!
	DAEMONS+=("$PID")
	MOUNTS+=("$mnt")
	wait_mounted "$mnt" "$PID"
	case $col in
	louring | gcuring) wait_rings "$PID" "$col" ;;
	esac
	uring_restore
}

# new_cipher DIR [ARGS]: a fresh gocryptfs filesystem in DIR (with
# GC=$REF: one the reference made).
new_cipher() {
	local d=$1
	shift
	rm -rf "$d"
	mkdir -p "$d"
	"${GC:-./gocryptfs}" -q -init "$@" -extpass "echo benchmark" "$d" >/dev/null
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

# run_suite DIR [PID] prints the numbers of one round, in the order of
# NAMES; PID is the FUSE daemon (its CPU time per untar; -1 without).
run_suite() {
	local d=$1 pid=${2:-} t
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

	local untar_s sha ls_s rm_s cpu=-1 c0
	drop_caches
	[[ -n $pid ]] && c0=$(cpu_ticks "$pid")
	untar_s=$(timed untar "$d")
	[[ -n $pid ]] && cpu=$(calc "($(cpu_ticks "$pid") - $c0) / $TICK")
	drop_caches
	sha=$(timed sha_tree "$d")
	drop_caches
	ls_s=$(timed sh -c "ls -lR '$d' >/dev/null")
	rm_s=$(timed rm_tree "$d")
	echo "$wr $rd $small $par1 $par4 $untar_s $sha $ls_s $rm_s $cpu"
}

# Columns: key, label.
COLS=(plain loopback nopt)
((URING)) && COLS+=(louring)
COLS+=(gcdev)
((URING)) && COLS+=(gcuring)
COLS+=(shared)
((HAVE_REF)) && COLS+=(ref)
FUSE_COLS=("${COLS[@]:1}")
declare -A LABEL=([plain]=plain [loopback]=loopback [nopt]=lo-nopt [louring]=lo-uring
	[gcdev]=gc-dev [gcuring]=gc-uring [shared]=-sharedstorage [ref]=ref-2.3)
has() { [[ " ${COLS[*]} " == *" $1 "* ]]; }

declare -A DIR DPID
echo "== mounting" >&2
: >"$W/lo-uring.log" # lo-uring's request counts, one line per unmount
mkdir -p "$W/plain" "$W/lo-orig" "$W/np-orig" "$W/lu-orig"
DIR[plain]=$W/plain
declare -A BACKING=([loopback]=$W/lo-orig [nopt]=$W/np-orig [louring]=$W/lu-orig)
new_cipher "$W/cipher" -scryptn 10
new_cipher "$W/cipher-uring" -scryptn 10
new_cipher "$W/cipher-shared" -scryptn 10
BACKING+=([gcdev]=$W/cipher [gcuring]=$W/cipher-uring [shared]=$W/cipher-shared)
if has ref; then
	GC=$REF new_cipher "$W/cipher-ref" -scryptn 10
	BACKING[ref]=$W/cipher-ref
fi
for c in "${FUSE_COLS[@]}"; do
	mount_col "$c" "${BACKING[$c]}" "$W/$c-mnt"
	DIR[$c]=$W/$c-mnt DPID[$c]=$PID
done

mkdir -p "$W/results"
for r in $(seq "$ROUNDS"); do
	for c in "${COLS[@]}"; do
		echo "== round $r/$ROUNDS: ${LABEL[$c]}" >&2
		run_suite "${DIR[$c]}" "${DPID[$c]:-}" >"$W/results/$c.$r"
	done
done
# Each column was served by the transport it is named after.
for c in "${FUSE_COLS[@]}"; do
	n=$(uring_fds "${DPID[$c]}")
	case $c in
	louring | gcuring) ok=$((n > 0)) ;;
	*) ok=$((n == 0)) ;;
	esac
	if ((!ok)); then
		echo "benchmark.bash: ${LABEL[$c]}: the daemon holds $n io_uring instances: wrong transport" >&2
		exit 1
	fi
done
for c in "${FUSE_COLS[@]}"; do
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
declare -A IDLE TREE PER10K
new_cipher "$W/cipher-scrypt" # default scrypt cost, as users have it
has ref && GC=$REF new_cipher "$W/cipher-scrypt-ref"
for c in "${FUSE_COLS[@]}"; do
	case $c in
	loopback | nopt | louring) backing=$W/lo-orig ;;
	ref) backing=$W/cipher-scrypt-ref ;;
	*) backing=$W/cipher-scrypt ;;
	esac
	mount_col "$c" "$backing" "$W/rss-mnt"
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
mount_col gcdev "$W/cipher-tree" "$W/rss-mnt"
make_tree "$W/rss-mnt"
unmount "$W/rss-mnt"
if has ref; then
	GC=$REF new_cipher "$W/cipher-tree-ref" -scryptn 10
	mount_col ref "$W/cipher-tree-ref" "$W/rss-mnt"
	make_tree "$W/rss-mnt"
	unmount "$W/rss-mnt"
fi
for c in "${FUSE_COLS[@]}"; do
	case $c in
	loopback | nopt | louring) backing=$W/lo-orig ;;
	ref) backing=$W/cipher-tree-ref ;;
	*) backing=$W/cipher-tree ;;
	esac
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
	"untar go/src (s)" "sha256 go/src cold (s)" "ls -lR go/src cold (s)" "rm -rf go/src (s)"
	"daemon CPU per untar (s)")
# Fields that are seconds (lower is better); the others are MB/s.
is_time() { (($1 >= 6)); }

# row NAME CELL...: one table row; cells are right-aligned to the width of
# their column (WIDTHS).
row() {
	local i=0 cell
	printf '| %-28s |' "$1"
	shift
	for cell in "$@"; do
		printf " %*s |" "${WIDTHS[$i]}" "$cell"
		i=$((i + 1))
	done
	echo
}
# header LABEL...: the header and separator of a table; sets WIDTHS.
header() {
	local l
	WIDTHS=()
	for l in "$@"; do
		WIDTHS+=($((${#l} > 9 ? ${#l} : 9)))
	done
	row test "$@"
	printf '|%s|' "------------------------------"
	for l in "${WIDTHS[@]}"; do
		printf '%s|' "$(printf '%*s' $((l + 2)) '' | tr ' ' -)"
	done
	echo
}
fmt() { if [[ $1 == - ]]; then echo -; else printf "%.${2:-2}f" "$1"; fi; }

declare -A MED
for c in "${COLS[@]}"; do
	for f in $(seq ${#NAMES[@]}); do
		MED[$c.$f]=$(median "$c" "$f")
	done
done
# value COL FIELD: the median, "-" where there is none.
value() {
	local v=${MED[$1.$2]:-}
	if [[ -z $v ]] || awk "BEGIN { exit !($v < 0) }"; then echo -; else echo "$v"; fi
}
# ratio A B FIELD: A's median over B's ("-" if either is missing).
ratio() {
	local a b
	a=$(value "$1" "$3") b=$(value "$2" "$3")
	if [[ $a == - || $b == - ]] || ! has "$1" || ! has "$2" || awk "BEGIN { exit !($b == 0) }"; then echo -; else calc "$a / $b"; fi
}
# faster A B FIELD: how many times faster A is than B.
faster() {
	if is_time "$3"; then ratio "$2" "$1" "$3"; else ratio "$1" "$2" "$3"; fi
}

printf '\n%s; %s; backing %s (%s); median of %s rounds\n' "$(./gocryptfs -version | head -1)" \
	"$(uname -r), $(nproc) cores" "$W" "$(stat -f -c %T "$W")" "$ROUNDS"
echo "Command: $0 -d $W -n $ROUNDS -s $MB -p $PAR_MB -f $FILES${EXTRA_ARGS[*]:+ -- ${EXTRA_ARGS[*]}}"
for n in "${NOTES[@]}"; do echo "Note: $n"; done
echo
labels=()
for c in "${COLS[@]}"; do labels+=("${LABEL[$c]}"); done
header "${labels[@]}"
for i in "${!NAMES[@]}"; do
	f=$((i + 1))
	cells=()
	for c in "${COLS[@]}"; do cells+=("$(fmt "$(value "$c" "$f")")"); done
	row "${NAMES[$i]}" "${cells[@]}"
done
cells=()
for c in "${COLS[@]}"; do
	a=$(value "$c" 5) b=$(value "$c" 4)
	cells+=("$(fmt "$(calc "$a / $b")")")
done
row "4 writers / 1 writer" "${cells[@]}"
for m in IDLE TREE PER10K; do
	case $m in
	IDLE) name="RSS idle after mount (MiB)" ;;
	TREE) name="RSS after stat $FILES (MiB)" ;;
	PER10K) name="RSS per 10,000 inodes (MiB)" ;;
	esac
	declare -n arr=$m
	cells=()
	for c in "${COLS[@]}"; do cells+=("$(fmt "${arr[$c]:--}" 1)"); done
	row "$name" "${cells[@]}"
	unset -n arr
done

# Ratios.
RCOLS=("gc/loop:gcdev:loopback" "gc/nopt:gcdev:nopt" "shared/gc:shared:gcdev")
((URING)) && RCOLS+=("lou/nopt:louring:nopt" "gcu/gc:gcuring:gcdev" "gcu/lou:gcuring:louring")
((URING && HAVE_REF)) && RCOLS+=("gcu vs ref:gcuring:ref")
echo
labels=()
for rc in "${RCOLS[@]}"; do labels+=("${rc%%:*}"); done
header "${labels[@]}"
for i in "${!NAMES[@]}"; do
	f=$((i + 1))
	cells=()
	for rc in "${RCOLS[@]}"; do
		IFS=: read -r l a b <<<"$rc"
		if [[ $l == "gcu vs ref" ]]; then
			cells+=("$(fmt "$(faster "$a" "$b" "$f")")")
		else
			cells+=("$(fmt "$(ratio "$a" "$b" "$f")")")
		fi
	done
	row "${NAMES[$i]}" "${cells[@]}"
done

# goal LINE VALUE OP BOUND: one checked goal.
goal() {
	local verdict=MISSED
	if [[ $2 == - ]]; then
		verdict="n/a"
	elif awk "BEGIN { exit !($2 $3 $4) }"; then
		verdict=met
	fi
	printf '  %-44s %7s  (goal %s %s)  %s\n' "$1" "$(fmt "$2")" "$3" "$4" "$verdict"
}
if ((URING)); then
	echo
	echo "Goals of issue 20, this run:"
	echo " gc-uring / gc-dev (seconds: time ratio; MB/s: speed ratio)"
	for f in 6 7 8 9; do goal "${NAMES[$((f - 1))]}" "$(ratio gcuring gcdev $f)" "<=" 0.62; done
	for f in 3 1 2; do goal "${NAMES[$((f - 1))]}" "$(ratio gcuring gcdev $f)" ">=" 1.0; done
	if ((HAVE_REF)); then
		echo " gc-uring against ref-2.3 (times faster)"
		goal "${NAMES[5]}" "$(faster gcuring ref 6)" ">=" 2.5
		for f in 8 7 9; do goal "${NAMES[$((f - 1))]}" "$(faster gcuring ref $f)" ">=" 1.8; done
	fi
	echo " memory"
	goal "gc-uring RSS idle, default scrypt (MiB)" "${IDLE[gcuring]}" "<=" 16
fi
