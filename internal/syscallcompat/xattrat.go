package syscallcompat

import (
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// XattrAt reads extended attributes of an entry named relative to a
// directory fd. With getxattrat(2) (Linux 6.13) that is one system call
// that resolves a single name in the directory, much cheaper for the
// kernel than a path through the /proc/self/fd magic link, which older
// kernels need. The zero value is ready to use; it remembers that the
// kernel lacks the call, so that the fallback costs no failed call after
// the first.
type XattrAt struct {
	noSyscall atomic.Bool
}

// Lgetxattr reads attribute attr of the entry name in dirfd into dest and
// returns the value length; an empty dest asks for the size. A symlink
// name is never followed (its own attributes are read), and name must be a
// single component ("." for dirfd itself).
func (x *XattrAt) Lgetxattr(dirfd int, name, attr string, dest []byte) (int, error) {
	if !x.noSyscall.Load() {
		n, err := getxattratRetry(dirfd, name, attr, dest)
		switch err {
		case syscall.ENOSYS:
			x.noSyscall.Store(true)
		case syscall.EPERM:
			// Maybe a seccomp filter that refuses unknown calls:
			// ask again the old way, without giving up the new one.
		default:
			return n, err
		}
	}
	p := ProcFdPath(dirfd) + "/" + name
	return RetryInt(func() (int, error) { return unix.Lgetxattr(p, attr, dest) })
}

func getxattratRetry(dirfd int, name, attr string, dest []byte) (int, error) {
	np, err := unix.BytePtrFromString(name)
	if err != nil {
		return 0, err
	}
	ap, err := unix.BytePtrFromString(attr)
	if err != nil {
		return 0, err
	}
	return RetryInt(func() (int, error) {
		// The conversion must be in the call's argument list (see
		// getxattrat).
		n, errno := getxattrat(uintptr(dirfd), np, ap, uintptr(unsafe.Pointer(unsafe.SliceData(dest))), len(dest))
		if errno != 0 {
			return 0, errno
		}
		return n, nil
	})
}

// xattrArgs is the kernel's struct xattr_args.
type xattrArgs struct {
	value uint64
	size  uint32
	flags uint32
}
