#!/bin/bash
#
# CI check of the Debian package (test.bash step "== Debian package"; run
# as root): builds it with ./release.bash --deb-only, installs it with
# dpkg -i, uses the installed /usr/bin/gocryptfs the way the demo does
# (init, mount, write, read, unmount, mount again with -extpass), mounts
# from /etc/fstab with mount -a (type fuse.gocryptfs, found in PATH by
# mount.fuse3, and fuse./usr/bin/gocryptfs), checks man -w for both man
# pages, removes and purges the package, and checks that none of its files
# is left.
#
# Where it runs: dpkg, the fstab entries and the mounts are real, but they
# happen in a private mount namespace in which /usr, /etc and /var are
# overlays whose writable layer is a tmpfs. That matters because our
# package, being a newer version of Debian's gocryptfs package, replaces
# it on dpkg -i, and Debian's /usr/bin/gocryptfs is the reference binary
# of the interop tests (internal/testutil/reference.go): on the machine
# itself it is never touched, whatever order the steps of test.bash run in,
# whichever other test runs at the same time, and however this script
# ends (even killed: the overlay, with the changed /etc/fstab and dpkg
# database, goes away with the namespace). The script checks afterwards
# that /etc/fstab, /usr/bin/gocryptfs and the installed version of the
# gocryptfs package are the same as before.

set -euo pipefail
self=$(realpath "$0")
cd "$(dirname "$self")/../.."

# ---- Inside the namespace: the overlays, then the checks.
if [[ ${1:-} == --inside ]]; then
	deb=$2 scratch=$3
	export PATH=/usr/sbin:/usr/bin:/sbin:/bin
	fail() {
		echo "package check: FAIL: $*" >&2
		exit 1
	}
	mount -t tmpfs pkgcheck "$scratch"
	for d in usr etc var; do
		mkdir "$scratch/$d.upper" "$scratch/$d.work"
		mount -t overlay "pkgcheck-$d" -o "lowerdir=/$d,upperdir=$scratch/$d.upper,workdir=$scratch/$d.work" "/$d"
	done
	t=$scratch/t
	mkdir "$t"
	# On every exit path: unmount what we mounted, so that no gocryptfs
	# daemon keeps the namespace alive, and put /etc/fstab back (it is
	# the overlay's copy; the machine's file was never written).
	cp -p /etc/fstab "$t/fstab.orig"
	cleanup() {
		local rc=$?
		set +e
		cp -p "$t/fstab.orig" /etc/fstab
		findmnt -rn -o TARGET | grep "^$t/" | sort -r | while read -r m; do
			umount -l "$m"
		done
		exit "$rc"
	}
	trap cleanup EXIT

	debversion=$(dpkg-deb -f "$deb" Version)
	old=$(dpkg-query -W -f='${db:Status-Status} ${Version}' gocryptfs 2>/dev/null || true)
	oldfiles=()
	if [[ $old == installed* ]]; then
		echo "package check: replacing the installed gocryptfs ${old#installed }"
		mapfile -t oldfiles < <(dpkg-query -L gocryptfs)
	fi
	# The man-db trigger's index rebuild takes longer than everything
	# else here and man -w does not need the index; the switch is the
	# overlay's copy.
	rm -f /var/lib/man-db/auto-update
	# --path-include: a machine whose dpkg.cfg excludes man pages (Docker
	# images) installs ours anyway, so man -w below checks the package.
	dpkg -i --path-include='/usr/share/man/man1/gocryptfs*' "$deb" >"$t/dpkg-i.log" 2>&1 || {
		cat "$t/dpkg-i.log" >&2
		fail "dpkg -i $deb"
	}
	[[ $(dpkg-query -W -f='${db:Status-Status} ${Version}' gocryptfs) == "installed $debversion" ]] ||
		fail "dpkg-query: $(dpkg-query -W gocryptfs)"
	mapfile -t files < <(dpkg-query -L gocryptfs)
	for f in "${oldfiles[@]}"; do
		if [[ ! -d $f ]] && [[ -e $f || -L $f ]] && ! printf '%s\n' "${files[@]}" | grep -qxF "$f"; then
			fail "$f of the replaced package is still there"
		fi
	done
	[[ $(command -v gocryptfs) == /usr/bin/gocryptfs ]] || fail "gocryptfs in PATH is $(command -v gocryptfs)"
	/usr/bin/gocryptfs -version | grep -q '^gocryptfs v[0-9]' || fail "gocryptfs -version: $(/usr/bin/gocryptfs -version)"
	/usr/bin/gocryptfs-xray -version | grep -q '^gocryptfs-xray v[0-9]' || fail "gocryptfs-xray -version: $(/usr/bin/gocryptfs-xray -version)"
	echo "package check: installed $(/usr/bin/gocryptfs -version)"

	# The demo flow with the installed binary.
	pw=$t/password
	echo "package check password" >"$pw"
	mkdir "$t/c1" "$t/c2" "$t/p" "$t/m1" "$t/m2"
	/usr/bin/gocryptfs -q -init -scryptn 10 -passfile "$pw" "$t/c1"
	/usr/bin/gocryptfs -q -init -scryptn 10 -passfile "$pw" "$t/c2"
	/usr/bin/gocryptfs -q -passfile "$pw" "$t/c1" "$t/p"
	echo "hello from the package" >"$t/p/hello.txt"
	[[ $(cat "$t/p/hello.txt") == "hello from the package" ]] || fail "read back after write"
	if grep -rq "hello" "$t/c1"; then fail "plaintext name or content in the ciphertext"; fi
	fusermount3 -u "$t/p"
	/usr/bin/gocryptfs -q -extpass "cat $pw" "$t/c1" "$t/p"
	[[ $(cat "$t/p/hello.txt") == "hello from the package" ]] || fail "read back after remount"
	fusermount3 -u "$t/p"
	echo "package check: init, mount, write, read, unmount, mount -extpass: ok"

	# /etc/fstab and mount -a. -O limits mount -a to our two lines (by
	# an x- option, which mount(8) keeps to itself); the first type is
	# the one docs/fstab.md suggests with the package, the second the one
	# it suggests for a binary elsewhere.
	marker=x-gocryptfs-package-check
	{
		echo "$t/c1 $t/m1 fuse.gocryptfs nofail,q,passfile=$pw,$marker 0 0"
		echo "$t/c2 $t/m2 fuse./usr/bin/gocryptfs nofail,q,passfile=$pw,$marker 0 0"
	} >>/etc/fstab
	mount -a -O "$marker" || fail "mount -a"
	for m in m1 m2; do
		[[ $(findmnt -n -o FSTYPE "$t/$m") == fuse.gocryptfs ]] || fail "$t/$m not mounted by mount -a: $(findmnt "$t/$m")"
	done
	[[ $(cat "$t/m1/hello.txt") == "hello from the package" ]] || fail "read through the fstab mount"
	echo "written through fstab" >"$t/m2/f"
	umount "$t/m1" "$t/m2"
	for m in m1 m2; do
		for _ in $(seq 50); do
			findmnt "$t/$m" >/dev/null || break
			sleep 0.1
		done
		if findmnt "$t/$m" >/dev/null; then fail "$t/$m still mounted after umount"; fi
	done
	cp -p "$t/fstab.orig" /etc/fstab
	echo "package check: mount -a from /etc/fstab (fuse.gocryptfs and fuse./usr/bin/gocryptfs), umount: ok"

	for p in gocryptfs gocryptfs-xray; do
		[[ $(man -w "$p") == "/usr/share/man/man1/$p.1.gz" ]] || fail "man -w $p: $(man -w "$p" 2>&1)"
	done
	man gocryptfs 2>/dev/null | grep -q 'encrypted overlay filesystem' || fail "man gocryptfs does not render"
	echo "package check: man -w gocryptfs, man -w gocryptfs-xray: ok"

	# Removal: every file of the package gone, and every directory it
	# listed either gone or still holding something of other packages.
	dpkg -r gocryptfs >"$t/dpkg-r.log" 2>&1 || {
		cat "$t/dpkg-r.log" >&2
		fail "dpkg -r"
	}
	dpkg -P gocryptfs >"$t/dpkg-p.log" 2>&1 || {
		cat "$t/dpkg-p.log" >&2
		fail "dpkg -P"
	}
	left=()
	for f in "${files[@]}"; do
		if [[ -L $f || -f $f ]]; then
			left+=("$f")
		elif [[ -d $f && -z $(ls -A "$f") ]]; then
			left+=("$f (empty directory)")
		fi
	done
	if compgen -G '/var/lib/dpkg/info/gocryptfs.*' >/dev/null; then
		left+=(/var/lib/dpkg/info/gocryptfs.*)
	fi
	((${#left[@]} == 0)) || fail "left after dpkg -P: ${left[*]}"
	status=$(dpkg-query -W -f='${db:Status-Status}' gocryptfs 2>/dev/null || echo not-installed)
	[[ $status == not-installed ]] || fail "after dpkg -P the package is $status"
	echo "package check: dpkg -r, dpkg -P: none of its ${#files[@]} paths left"
	exit 0
fi

# ---- Outside: build, run the above in its namespace, check the machine.
# Like the Go tests that mount, skip where that cannot work.
if [[ $(id -u) -ne 0 || ! -e /dev/fuse ]]; then
	echo "tests/package/check.bash: skipped (needs root and /dev/fuse)" >&2
	exit 0
fi
start=$SECONDS
./release.bash --deb-only >/dev/null
built=$((SECONDS - start))
debs=(dist/gocryptfs_*_amd64.deb)
deb=$PWD/${debs[0]}

# What must be the same afterwards.
machine_state() {
	sha256sum /etc/fstab
	if [[ -e /usr/bin/gocryptfs ]]; then sha256sum /usr/bin/gocryptfs; fi
	dpkg-query -W -f='${db:Status-Status} ${Version}\n' gocryptfs 2>/dev/null || echo "gocryptfs not installed"
}
before=$(machine_state)
scratch=$(mktemp -d /tmp/gocryptfs-pkgcheck.XXXXXX)
rc=0
unshare --mount --propagation private "$self" --inside "$deb" "$scratch" || rc=$?
rmdir "$scratch"
after=$(machine_state)
if [[ $before != "$after" ]]; then
	echo "package check: FAIL: the machine changed:" >&2
	diff <(echo "$before") <(echo "$after") >&2 || true
	exit 1
fi
if ((rc != 0)); then
	exit "$rc"
fi
echo "package check: $(basename "$deb") ok in $((SECONDS - start)) s, $built s of it building (the machine's /etc/fstab, /usr/bin/gocryptfs and gocryptfs package unchanged)"
