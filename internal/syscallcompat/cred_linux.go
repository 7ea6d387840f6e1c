//go:build linux

package syscallcompat

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// setCred sets the supplementary groups, fsgid and fsuid of the calling
// thread. The groups come first: once fsuid is not 0 any more, the kernel
// drops the filesystem capabilities, but CAP_SETGID stays.
func setCred(uid, gid int, groups []int) error {
	if err := unix.Setgroups(groups); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	// setfsgid/setfsuid never report errors; they return the previous
	// value, and a second call with an invalid id (-1) returns the
	// current one, which tells whether the change took effect.
	unix.SetfsgidRetGid(gid)
	if cur, _ := unix.SetfsgidRetGid(-1); cur != gid {
		return fmt.Errorf("setfsgid(%d): still %d: %w", gid, cur, unix.EPERM)
	}
	unix.SetfsuidRetUid(uid)
	if cur, _ := unix.SetfsuidRetUid(-1); cur != uid {
		return fmt.Errorf("setfsuid(%d): still %d: %w", uid, cur, unix.EPERM)
	}
	return nil
}
