//go:build !linux && !darwin

package main

import (
	"runtime"

	"gocryptfs/internal/exitcodes"
)

// mountAction: the FUSE frontends are built for Linux and macOS only (on
// FreeBSD they would need their own replacements for renameat2 flags and
// more, and go-fuse's support there is limited), so this build cannot
// mount. Everything that works on CIPHERDIR without a mount (-init,
// -passwd, the key slots, -info, -fsck, -speed) does.
func mountAction(e *env, a *argContainer) error {
	return exitcodes.Errorf(exitcodes.FuseNewServer,
		"mounting is not supported on %s: this build of gocryptfs mounts on Linux and macOS only; -init, -passwd, -info, -fsck and the key slot commands work here", runtime.GOOS)
}
