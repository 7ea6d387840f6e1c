//go:build !linux

package contentio

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// fdatasync is fsync(2): there is no fdatasync here (macOS) or it is not
// in x/sys/unix for every system; fsync does at least as much.
func fdatasync(fd int) error {
	return unix.Fsync(fd)
}

// ofdSetlk: open file description locks are Linux only, and the
// process-wide POSIX locks are no replacement (any close of the file by
// the process drops them). EOPNOTSUPP makes the caller run unlocked as on
// a backing filesystem without locks; only -sharedstorage mounts lock.
func ofdSetlk(fd int, flk *unix.Flock_t) error {
	return syscall.EOPNOTSUPP
}
