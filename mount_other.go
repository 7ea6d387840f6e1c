//go:build !linux

package main

import (
	"runtime"

	"gocryptfs/internal/exitcodes"
)

// mountAction: the FUSE frontends use Linux-only system calls (O_PATH and
// /proc/self/fd, per-thread credentials, OFD locks, renameat2, O_TMPFILE),
// so this build cannot mount. Everything that works on CIPHERDIR without
// a mount (-init, -passwd, the key slots, -info, -fsck, -speed) does.
func mountAction(e *env, a *argContainer) error {
	return exitcodes.Errorf(exitcodes.FuseNewServer,
		"mounting is not supported on %s: this build of gocryptfs mounts on Linux only; -init, -passwd, -info, -fsck and the key slot commands work here", runtime.GOOS)
}
