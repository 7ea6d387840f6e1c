package main

import (
	"slices"
	"strings"

	"gocryptfs/internal/exitcodes"
)

// darwinRefuses refuses the mount options whose guarantees rest on Linux
// primitives that macOS lacks (docs/cli.md "Platforms"), rather than mount
// with weaker ones:
//
//   - -allow_other as root: the forward mount creates and opens files
//     with each caller's identity (per-thread setfsuid, setfsgid and
//     setgroups); without that every caller would act as root.
//   - -sharedstorage: it coordinates with the other mounts of CIPHERDIR
//     through open file description locks on the ciphertext files
//     (F_OFD_SETLK), which macOS does not have.
//   - -acl: POSIX ACLs are Linux's system.posix_acl_* attributes.
//   - -ko nosymfollow and -ko lazytime: set with Linux's mount_setattr
//     after mounting (mountopts.Attrs); nosymfollow would otherwise be
//     dropped without a word, and a mount that the user asked not to
//     follow symlinks on would follow them.
//
// The reverse view is read-only, acts as the mounting user and takes no
// locks: only -acl and the -ko options concern it. euid is the daemon's
// effective user ID.
//
// It is in a file of every build so that its table is tested where the
// tests run (Linux); only the darwin build calls it.
func darwinRefuses(a *argContainer, euid int) error {
	refuse := func(opt, why string) error {
		return exitcodes.Errorf(exitcodes.FuseNewServer, "%s is not supported on this system (darwin): %s", opt, why)
	}
	switch {
	case a.acl:
		return refuse("-acl", "POSIX ACLs are Linux-only")
	case lastOf(a.ko, "nosymfollow", "symfollow") == "nosymfollow":
		return refuse("-ko nosymfollow", "it is set with Linux's mount_setattr")
	case lastOf(a.ko, "lazytime", "nolazytime") == "lazytime":
		return refuse("-ko lazytime", "it is set with Linux's mount_setattr")
	case a.reverse:
		return nil
	case a.allowOther && euid == 0:
		return refuse("-allow_other as root", "files could not be created and opened with the calling user's identity (Linux's per-thread setfsuid), only as root")
	case a.sharedstorage:
		return refuse("-sharedstorage", "it relies on Linux's open file description locks (F_OFD_SETLK) to coordinate with other mounts")
	}
	return nil
}

// lastOf returns the last of opts in the comma-separated option list ko,
// or "": the last of an option and its opposite wins.
func lastOf(ko string, opts ...string) string {
	last := ""
	for _, k := range strings.Split(ko, ",") {
		if slices.Contains(opts, k) {
			last = k
		}
	}
	return last
}
