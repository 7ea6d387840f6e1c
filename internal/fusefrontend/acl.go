package fusefrontend

import (
	"context"
	"strconv"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/syscallcompat"
)

// POSIX ACLs (-acl). The ACL attributes pass through unencrypted to the
// backing entries (docs/format.md 8), so the backing filesystem keeps
// them consistent with the mode bits (chmod changes the mask, setting an
// access ACL changes the mode) and applies a directory's default ACL to
// the backing entries created in it. The kernel checks permissions
// against them (FUSE_POSIX_ACL implies default_permissions). What is left
// here: with FUSE_DONT_MASK the kernel sends the requested mode without
// the caller's umask, so that it can be applied only where there is no
// default ACL to inherit, as a local filesystem does.

const (
	aclAccess  = "system.posix_acl_access"
	aclDefault = "system.posix_acl_default"
)

// modeFor returns the mode to create a new entry with in the backing
// directory dirfd, and whether it inherits the directory's default ACL
// (the backing filesystem then derives the final mode and ACL from mode,
// and no chmod may follow). Without -acl the kernel already applied the
// umask.
func (rn *RootNode) modeFor(ctx context.Context, dirfd int, mode uint32) (uint32, bool) {
	if !rn.args.ACL {
		return mode, false
	}
	if sz, err := syscallcompat.Fgetxattr(dirfd, aclDefault, nil); err == nil && sz > 0 {
		return mode, true
	}
	return mode &^ callerUmask(ctx), false
}

// callerUmask returns the umask of the calling process, from
// /proc/<tid>/status (the kernel does not send it with the request
// unless asked to skip applying it: FUSE_DONT_MASK). 022 if unknown.
func callerUmask(ctx context.Context) uint32 {
	umask := uint32(0o022)
	c, ok := fuse.FromContext(ctx)
	if !ok || c.Pid == 0 {
		return umask
	}
	procStatus(c.Pid, func(key, val string) {
		if key == "Umask" {
			if m, err := strconv.ParseUint(val, 8, 32); err == nil {
				umask = uint32(m)
			}
		}
	})
	return umask
}

// killSgidAfterACL clears the setgid bit of the backing entry fd after an
// access ACL was set by a caller outside the file's group without
// CAP_FSETID, as setfacl on a local filesystem does (the kernel asks for
// this with FUSE_SETXATTR_ACL_KILL_SGID, which go-fuse does not pass on).
func (rn *RootNode) killSgidAfterACL(ctx context.Context, fd int) error {
	c, ok := fuse.FromContext(ctx)
	if !ok || c.Pid == 0 {
		return nil
	}
	var st unix.Stat_t
	if err := syscallcompat.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&syscall.S_ISGID == 0 || callerInGroupOrFsetid(c.Pid, c.Gid, st.Gid) {
		return nil
	}
	// fd is an O_PATH handle: chmod through its /proc path.
	return syscallcompat.ChmodPathFd(fd, uint32(st.Mode&0o7777&^syscall.S_ISGID))
}
