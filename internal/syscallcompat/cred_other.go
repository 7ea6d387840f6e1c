//go:build !linux

package syscallcompat

import (
	"fmt"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// setCred cannot change the filesystem identity of one thread here
// (setfsuid and setfsgid are Linux only): it succeeds only when the
// identity asked for is the process's own (as when AsCaller restores it)
// and reports EOPNOTSUPP otherwise.
func setCred(uid, gid int, groups []int) error {
	if uid == unix.Geteuid() && gid == unix.Getegid() {
		return nil
	}
	return fmt.Errorf("acting as uid %d gid %d: not supported on %s: %w", uid, gid, runtime.GOOS, syscall.EOPNOTSUPP)
}
