#!/bin/bash
#
# Memory per inode of a gocryptfs mount: creates FILES files in DIRS
# directories, mounts the filesystem afresh, stats every file through the
# mount (find -printf %s), waits IDLE seconds and reads the daemon's VmRSS.
# Prints one line of key=value pairs (KiB):
#   rss_idle=...      after mounting, before any access
#   rss_stat=...      right after stat-ing all files
#   rss_stat_idle=... after IDLE more seconds
#   inodes=...        files + directories stat-ed
#   per_10k=...       (rss_stat_idle - rss_idle) per 10,000 inodes
# benchmark.bash can call it; alone it needs root (fusermount3 works too).
#
# Usage: tests/bench/rss_inodes.bash [-d DIR] [-b GOCRYPTFS] [extra mount args]
#   -d DIR        where to put CIPHERDIR and the mount point (default: a
#                 temporary directory under /tmp)
#   -b GOCRYPTFS  the binary (default: ./gocryptfs of this checkout, built
#                 with ./build.bash if missing)
#   FILES=60000 DIRS=300 IDLE=5
#   RSS_CIPHERDIR=DIR  keep the populated CIPHERDIR there and reuse it on
#                      the next run (creating 60,000 files takes minutes)

set -euo pipefail
cd "$(dirname "$0")/../.."

W="" BIN=""
while [[ $# -gt 0 ]]; do
	case $1 in
	-d) W=$2; shift 2 ;;
	-b) BIN=$2; shift 2 ;;
	*) break ;;
	esac
done
EXTRA_ARGS=("$@")
FILES=${FILES:-60000}
DIRS=${DIRS:-300}
IDLE=${IDLE:-5}
if [[ -z $BIN ]]; then
	[[ -x ./gocryptfs ]] || ./build.bash >/dev/null
	BIN=$PWD/gocryptfs
fi
OWN=""
if [[ -z $W ]]; then
	W=$(mktemp -d /tmp/gocryptfs-rss.XXXXXX)
	OWN=$W
else
	mkdir -p "$W"
	W=$(mktemp -d "$W/gocryptfs-rss.XXXXXX")
	OWN=$W
fi
C=${RSS_CIPHERDIR:-$W/cipher} M=$W/mnt
mkdir -p "$C" "$M"
cleanup() {
	fusermount3 -u "$M" 2>/dev/null || umount -l "$M" 2>/dev/null || true
	[[ -n $OWN ]] && rm -rf "$OWN"
}
trap cleanup EXIT

mount_fs() {
	"$BIN" -q -extpass "echo rss" "${EXTRA_ARGS[@]}" "$C" "$M"
	PID=$(pgrep -n -f -- "$M\$")
}
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$PID/status"; }

if [[ ! -f $C/gocryptfs.conf ]]; then
	"$BIN" -q -init -scryptn 10 -extpass "echo rss" "$C" >/dev/null
	mount_fs
	# Create the tree through the mount (names and IVs like a real
	# user's).
	per=$((FILES / DIRS))
	(
		cd "$M"
		for d in $(seq 1 "$DIRS"); do
			mkdir "d$d"
			(cd "d$d" && seq 1 "$per" | sed 's/^/file-with-a-typical-name-/' | xargs touch)
		done
	)
	fusermount3 -u "$M"
fi
sync
[[ -w /proc/sys/vm/drop_caches ]] && echo 2 >/proc/sys/vm/drop_caches

mount_fs
sleep 1
idle=$(rss)
n=$(find "$M" -printf '%s\n' | wc -l)
stat_rss=$(rss)
sleep "$IDLE"
stat_idle=$(rss)
echo "rss_idle=$idle rss_stat=$stat_rss rss_stat_idle=$stat_idle inodes=$n per_10k=$(( (stat_idle - idle) * 10000 / n ))"
