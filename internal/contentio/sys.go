package contentio

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// maxEINTR bounds how often one system call is restarted after EINTR (the
// Go runtime interrupts threads with SIGURG for preemption, which aborts
// slow calls on network and FUSE backing stores).
const maxEINTR = 100

// pwriteFull writes all of buf at off. A short write without an error from
// the kernel (which happens when the disk fills up mid-way) is retried for
// the remainder so that the real error, usually ENOSPC, surfaces.
func pwriteFull(fd int, buf []byte, off int64) error {
	done := 0
	eintr := 0
	for done < len(buf) {
		n, err := unix.Pwrite(fd, buf[done:], off+int64(done))
		if err == syscall.EINTR && eintr < maxEINTR {
			eintr++
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return syscall.EIO
		}
		done += n
	}
	return nil
}

// fstatSize returns the size of the file behind fd.
func fstatSize(fd int) (uint64, error) {
	var st unix.Stat_t
	if err := retry(func() error { return unix.Fstat(fd, &st) }); err != nil {
		return 0, err
	}
	return uint64(st.Size), nil
}

// ftruncate sets the size of the file behind fd.
func ftruncate(fd int, size uint64) error {
	return retry(func() error { return unix.Ftruncate(fd, int64(size)) })
}

// fallocate allocates [off, off+length) of the file behind fd.
func fallocate(fd int, mode uint32, off, length uint64) error {
	return retry(func() error { return unix.Fallocate(fd, mode, int64(off), int64(length)) })
}

// lseek is lseek(2) with EINTR handling.
func lseek(fd int, off int64, whence int) (int64, error) {
	var res int64
	err := retry(func() error {
		var err error
		res, err = unix.Seek(fd, off, whence)
		return err
	})
	return res, err
}

// retry calls fn until it returns something other than EINTR (bounded).
func retry(fn func() error) error {
	var err error
	for range maxEINTR {
		if err = fn(); err != syscall.EINTR {
			return err
		}
	}
	return err
}
