package contentio

import "golang.org/x/sys/unix"

// fdatasync is fdatasync(2).
func fdatasync(fd int) error {
	return unix.Fdatasync(fd)
}

// ofdSetlk sets or clears the open file description lock flk on fd
// without waiting (F_OFD_SETLK).
func ofdSetlk(fd int, flk *unix.Flock_t) error {
	return unix.FcntlFlock(uintptr(fd), unix.F_OFD_SETLK, flk)
}
