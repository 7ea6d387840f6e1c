//go:build linux

package fuseserve

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/mountinfo"
	"gocryptfs/internal/mountopts"
)

// applyMountAttrs sets a on the FUSE mount whose root is dir. It needs
// CAP_SYS_ADMIN (root): fusermount3 is what lets other users mount.
func applyMountAttrs(dir string, a mountopts.MountAttrs) error {
	if a.Empty() {
		return nil
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open mount point: %w", err)
	}
	defer unix.Close(fd)
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(fd, &sfs); err != nil {
		return fmt.Errorf("statfs mount point: %w", err)
	}
	if !mountinfo.IsFUSE(int64(sfs.Type)) {
		return fmt.Errorf("%s is not a FUSE mount (f_type %#x)", dir, sfs.Type)
	}
	if a.Lazytime != 0 {
		if err := remountLazytime(dir, sfs.Flags, a.Lazytime > 0); err != nil {
			return err
		}
	}
	if a.Set != 0 || a.Clear != 0 {
		attr := unix.MountAttr{Attr_set: a.Set, Attr_clr: a.Clear}
		if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, &attr); err != nil {
			return fmt.Errorf("mount_setattr: %w", err)
		}
	}
	return nil
}

// remountLazytime sets or clears the lazytime flag of the superblock of
// the mount on dir. A superblock remount also sets the mount's own flags
// from its arguments, so the ones it has (flags, statfs f_flags) are
// passed along; the atime flags are kept by the kernel when none is
// given.
func remountLazytime(dir string, flags int64, on bool) error {
	keep := []struct{ st, ms uintptr }{
		{unix.ST_RDONLY, unix.MS_RDONLY},
		{unix.ST_NOSUID, unix.MS_NOSUID},
		{unix.ST_NODEV, unix.MS_NODEV},
		{unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_SYNCHRONOUS, unix.MS_SYNCHRONOUS},
		{unix.ST_MANDLOCK, unix.MS_MANDLOCK},
		{stNoSymfollow, unix.MS_NOSYMFOLLOW},
	}
	ms := uintptr(unix.MS_REMOUNT)
	for _, k := range keep {
		if uintptr(flags)&k.st != 0 {
			ms |= k.ms
		}
	}
	if on {
		ms |= unix.MS_LAZYTIME
	}
	if err := unix.Mount("", dir, "", ms, ""); err != nil {
		return fmt.Errorf("remount for lazytime: %w", err)
	}
	return nil
}

// stNoSymfollow is ST_NOSYMFOLLOW of statfs f_flags (x/sys/unix lacks it).
const stNoSymfollow = 0x2000

// errMountAttrs marks a failure to set the mount attributes.
var errMountAttrs = errors.New("cannot set the mount options that fusermount3 does not take")
