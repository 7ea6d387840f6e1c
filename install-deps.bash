#!/bin/bash
#
# Install the system packages gocryptfs needs to build and test, on Debian
# (run as root): fuse3 (fusermount3 and /dev/fuse support), libssl-dev and
# gcc (the OpenSSL cipher backend is built with cgo), and Debian's gocryptfs
# (2.3, /usr/bin/gocryptfs), the reference that tests/interop compares
# against. Packages that are
# already installed are left alone; apt-get update only runs if something
# is missing. Go itself (>= the version in go.mod) must already be
# installed, in PATH or in /usr/local/go.

set -euo pipefail

missing=()
command -v fusermount3 >/dev/null || missing+=(fuse3)
command -v gcc >/dev/null || missing+=(gcc)
[[ -e /usr/include/openssl/evp.h ]] || missing+=(libssl-dev)
command -v logger >/dev/null || missing+=(bsdutils)
command -v pkg-config >/dev/null || missing+=(pkg-config)
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
command -v rclone >/dev/null || missing+=(rclone) # tests/sync: rclone serve webdav + rclone mount

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
