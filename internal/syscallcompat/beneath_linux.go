//go:build linux

package syscallcompat

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// openDirBeneath is OpenDirBeneath; useOpenat2 false takes the fallback
// (for tests).
func openDirBeneath(baseFd int, rel string, useOpenat2 bool) (int, error) {
	if err := CheckRelPath(rel); err != nil {
		return -1, err
	}
	if rel == "" {
		return OpenDirAt(baseFd, ".")
	}
	if useOpenat2 {
		how := unix.OpenHow{
			Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		}
		fd, err := RetryInt(func() (int, error) { return unix.Openat2(baseFd, rel, &how) })
		for i := 0; err == syscall.EAGAIN && i < maxEINTR; i++ {
			// A rename somewhere below baseFd raced the lookup.
			fd, err = RetryInt(func() (int, error) { return unix.Openat2(baseFd, rel, &how) })
		}
		// ENOSYS: kernel older than 5.6; EPERM: a seccomp filter that
		// does not know openat2. Both take the walk.
		if err != syscall.ENOSYS && err != syscall.EPERM {
			if err != nil {
				return -1, err
			}
			return fd, nil
		}
	}
	return WalkDirs(baseFd, rel)
}
