#!/bin/bash
#
# Install the Debian packages gocryptfs needs (run as root). Packages that
# are already there are left alone; apt-get update only runs if something
# is missing. Go itself (>= the version in go.mod) must already be
# installed, in PATH or in /usr/local/go.
#
#   ./install-deps.bash          to build and use gocryptfs (what demo.bash
#                                needs): fuse3 (fusermount3, mount.fuse3),
#                                gcc and libc6-dev (cgo), libssl-dev (the
#                                OpenSSL cipher backend)
#   ./install-deps.bash --test   the above and what test.bash needs: Debian's
#                                gocryptfs 2.3 (/usr/bin/gocryptfs, the
#                                reference of the interop tests), e2fsprogs,
#                                xfsprogs, acl, attr, openssh-server (which
#                                starts sshd where systemd runs), sshfs,
#                                syncthing, rclone, man-db and dpkg-dev (the Debian
#                                package check)

set -euo pipefail

case "${1:-}" in
"") test=false ;;
--test) test=true ;;
*)
	echo "usage: $0 [--test]" >&2
	exit 2
	;;
esac

missing=()
# Build and run.
if ! command -v fusermount3 >/dev/null || ! [[ -x /sbin/mount.fuse3 || -x /usr/sbin/mount.fuse3 ]]; then
	missing+=(fuse3)
fi
command -v gcc >/dev/null || missing+=(gcc)
[[ -e /usr/include/stdio.h ]] || missing+=(libc6-dev)
[[ -e /usr/include/openssl/evp.h ]] || missing+=(libssl-dev)

if $test; then
	# syslog output of background mounts (bsdutils is essential on Debian).
	command -v logger >/dev/null || missing+=(bsdutils)
	# POSIX table and xattr capacity tests: ext4/XFS images on loop devices.
	command -v mkfs.ext4 >/dev/null || missing+=(e2fsprogs)
	command -v mkfs.xfs >/dev/null || missing+=(xfsprogs)
	command -v losetup >/dev/null || missing+=(mount)
	# setfacl and setfattr: the multi-user permission tests of fusefrontend.
	command -v setfacl >/dev/null || missing+=(acl)
	command -v setfattr >/dev/null || missing+=(attr)
	# The reference (interop and key-slot tests), by path, not by PATH: a
	# gocryptfs we installed ourselves is no reference.
	[[ -x /usr/bin/gocryptfs ]] || missing+=(gocryptfs)
	# tests/sync: sshfs to this machine's own sshd, and Syncthing.
	[[ -x /usr/sbin/sshd ]] || missing+=(openssh-server)
	command -v ssh-keygen >/dev/null || missing+=(openssh-client)
	command -v sshfs >/dev/null || missing+=(sshfs)
	command -v syncthing >/dev/null || missing+=(syncthing)
	# tests/sync: rclone serve webdav, and rclone mount over it.
	command -v rclone >/dev/null || missing+=(rclone)
	# tests/package: release.bash builds the .deb (dpkg-shlibdeps computes
	# its Depends), the check runs man -w on the installed package.
	command -v dpkg-shlibdeps >/dev/null || missing+=(dpkg-dev)
	command -v man >/dev/null || missing+=(man-db)
fi

if ((${#missing[@]} > 0)); then
	echo "install-deps.bash: installing ${missing[*]}"
	if [[ $(id -u) -ne 0 ]]; then
		echo "install-deps.bash: need root to install packages" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q "${missing[@]}"
fi

if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then
	echo "install-deps.bash: Go found in /usr/local/go/bin; add it to PATH" >&2
fi
