package syscallcompat

import (
	"errors"
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
// system call change only the calling thread), so fn runs on a goroutine
// of its own, locked to its OS thread, and must not hand work to other
// goroutines; AsCaller waits for it. The daemon's identity is restored in
// a deferred call, so also when fn panics; the panic is then raised again
// in the caller's goroutine (where the request's recover catches it). If
// the identity cannot be restored, the goroutine ends with its thread
// still locked, and the Go runtime terminates such a thread instead of
// reusing it: a thread with a foreign identity never runs anything else.
// The goroutine of its own is what makes this hold for callers that serve
// more requests after this one (go-fuse's reader goroutines do). Changing
// the identity needs CAP_SETUID and CAP_SETGID.
func AsCaller(c Cred, fn func() error) error {
	done := make(chan asCallerResult, 1)
	go func() {
		var r asCallerResult
		defer func() { done <- r }()
		r = asCallerLocked(c, fn)
	}()
	r := <-done
	if r.panicked {
		panic(r.panicValue)
	}
	return r.err
}

// asCallerResult is what fn (and the identity switches around it) gave.
type asCallerResult struct {
	err        error
	panicked   bool
	panicValue any
}

// asCallerLocked is AsCaller on the calling goroutine, which it locks to
// its thread and leaves locked when the thread keeps a foreign identity.
func asCallerLocked(c Cred, fn func() error) (r asCallerResult) {
	runtime.LockOSThread()
	origGroups, err := unix.Getgroups()
	if err != nil {
		runtime.UnlockOSThread()
		r.err = fmt.Errorf("getgroups: %w", err)
		return r
	}
	origUid, origGid := unix.Geteuid(), unix.Getegid()
	defer func() {
		if v := recover(); v != nil {
			r.panicked, r.panicValue = true, v
		}
		if err := setCred(origUid, origGid, origGroups); err != nil {
			// The thread stays locked and dies with this goroutine.
			r.err = errors.Join(r.err, fmt.Errorf("restoring the daemon's identity: %w", err))
			return
		}
		runtime.UnlockOSThread()
	}()
	if err := setCred(int(c.Uid), int(c.Gid), intGroups(c.Groups)); err != nil {
		r.err = err
		return r
	}
	r.err = fn()
	return r
}

func intGroups(g []uint32) []int {
	out := make([]int, len(g))
	for i, v := range g {
		out[i] = int(v)
	}
	return out
}
