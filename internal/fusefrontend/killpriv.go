package fusefrontend

import (
	"context"
	"slices"
	"strconv"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/syscallcompat"
)

// Read-write mounts negotiate CAP_HANDLE_KILLPRIV_V2 (mountopts.Build):
// the kernel then stops asking for security.capability before every
// write(2), one round trip each, and
// the filesystem clears the set-user-ID and set-group-ID bits itself when
// an unprivileged caller writes or truncates, as the kernel does on a
// local filesystem. Only a daemon running as root needs to: its own
// writes to the backing file keep the bits (it has CAP_FSETID), whereas an
// unprivileged daemon's writes clear them in the backing kernel. Doing it
// also where the kernel did it first is harmless: the rule is the same.

// killedMode returns mode without the bits a write or truncate by an
// unprivileged caller clears: set-user-ID always; set-group-ID on a
// group-executable file, or when the caller is not in the file's group
// (inGroup is asked only then).
func killedMode(mode uint32, inGroup func() bool) uint32 {
	kill := mode & syscall.S_ISUID
	if mode&syscall.S_ISGID != 0 && (mode&syscall.S_IXGRP != 0 || !inGroup()) {
		kill |= syscall.S_ISGID
	}
	return mode &^ kill
}

// keepsSetid reports whether the caller of ctx may write without
// clearing set-id bits: it has CAP_FSETID. FUSE requests carry only uid,
// gid and pid, so root's capability is read from /proc (a root process
// may have dropped it); an unknown process (pid 0: kernel writeback, or
// another pid namespace) counts as privileged.
func keepsSetid(ctx context.Context) bool {
	if noCaller(ctx) {
		return true
	}
	c, _ := fuse.FromContext(ctx)
	if c.Uid != 0 {
		return false
	}
	keeps := true
	procStatus(c.Pid, func(key, val string) {
		if key == "CapEff" {
			caps, err := strconv.ParseUint(val, 16, 64)
			keeps = err != nil || caps&(1<<capFsetid) != 0
		}
	})
	return keeps
}

// noCaller reports whether ctx carries no process (pid 0): the kernel's
// write-back of its page cache (FUSE_WRITE_CACHE WRITEs are sent without
// credentials), which keepsSetid counts as privileged. Checked before the
// fstat, which such a write never needs: the kernel clears the bits itself
// at write(2) time (or writes through with FUSE_WRITE_KILL_SUIDGID).
func noCaller(ctx context.Context) bool {
	c, ok := fuse.FromContext(ctx)
	return !ok || c.Pid == 0
}

// killPrivFd clears the set-id bits a write or truncate by a caller
// without CAP_FSETID clears (killedMode) on the open backing file fd;
// force: the kernel already decided so (FATTR_KILL_SUIDGID).
func (rn *RootNode) killPrivFd(ctx context.Context, fd int, force bool) error {
	if !rn.asRoot || !force && noCaller(ctx) {
		return nil
	}
	var st unix.Stat_t
	if err := syscallcompat.Fstat(fd, &st); err != nil {
		return err
	}
	if k, ok := killBits(ctx, &st); ok && (force || !keepsSetid(ctx)) {
		return syscallcompat.Fchmod(fd, k)
	}
	return nil
}

// killBits returns the new permission bits of a regular file and whether
// they differ from the current ones.
func killBits(ctx context.Context, st *unix.Stat_t) (uint32, bool) {
	mode := uint32(st.Mode & 0o7777)
	k := killedMode(mode, func() bool { return callerInGroup(ctx, st.Gid) })
	return k, k != mode && st.Mode&syscall.S_IFMT == syscall.S_IFREG
}

// callerInGroup reports whether the caller of ctx has gid as primary or
// supplementary group.
func callerInGroup(ctx context.Context, gid uint32) bool {
	c, ok := fuse.FromContext(ctx)
	if !ok {
		return false
	}
	return slices.Contains(procGroups(c.Pid, c.Gid), gid) || c.Gid == gid
}
