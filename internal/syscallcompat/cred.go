package syscallcompat

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// Cred is the identity of a file system caller: the uid and gid new
// entries get, and the supplementary groups the kernel consults for
// permission checks and set-group-ID rules.
type Cred struct {
	Uid, Gid uint32
	Groups   []uint32
}

// AsCaller runs fn with the filesystem identity of c: fn's system calls
// create entries owned by c.Uid, with the group the kernel picks for that
// caller (c.Gid, or the parent's group in a set-group-ID directory), and
// the kernel checks permissions, quota and NFS root squashing against c
// instead of the (root) daemon. Creating as ourselves and chowning
// afterwards cannot get the set-group-ID rules right and leaves a wrong
// owner behind when the chown fails.
//
// The credentials are per thread (setfsuid, setfsgid and the raw setgroups
// system call change only the calling thread), so fn runs on a locked OS
// thread and must not hand work to other goroutines. Changing the
// identity needs CAP_SETUID and CAP_SETGID. If the original identity
// cannot be restored afterwards (which root never sees), the thread stays
// locked to this goroutine, so the Go runtime discards it when the
// goroutine ends instead of reusing a thread with foreign credentials.
func AsCaller(c Cred, fn func() error) error {
	runtime.LockOSThread()
	origGroups, err := unix.Getgroups()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("getgroups: %w", err)
	}
	origUid, origGid := unix.Geteuid(), unix.Getegid()
	if err := setCred(int(c.Uid), int(c.Gid), intGroups(c.Groups)); err != nil {
		if rerr := setCred(origUid, origGid, origGroups); rerr != nil {
			return fmt.Errorf("%w (restoring the daemon's identity failed too: %v)", err, rerr)
		}
		runtime.UnlockOSThread()
		return err
	}
	ferr := fn()
	if err := setCred(origUid, origGid, origGroups); err != nil {
		return fmt.Errorf("restoring the daemon's identity: %w", err)
	}
	runtime.UnlockOSThread()
	return ferr
}

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

func intGroups(g []uint32) []int {
	out := make([]int, len(g))
	for i, v := range g {
		out[i] = int(v)
	}
	return out
}
