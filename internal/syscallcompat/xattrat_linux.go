//go:build linux

package syscallcompat

import (
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// getxattrat calls getxattrat(2) with AT_SYMLINK_NOFOLLOW. value is the
// address of the destination buffer, which the kernel writes through a
// field of xattrArgs; go:uintptrescapes keeps that buffer on the heap and
// alive for the call, where the garbage collector cannot see it.
//
//go:uintptrescapes
//go:noinline
func getxattrat(dirfd uintptr, name, attr *byte, value uintptr, size int) (int, syscall.Errno) {
	args := &xattrArgs{value: uint64(value), size: uint32(size)}
	r, _, e := unix.Syscall6(unix.SYS_GETXATTRAT, dirfd, uintptr(unsafe.Pointer(name)), unix.AT_SYMLINK_NOFOLLOW,
		uintptr(unsafe.Pointer(attr)), uintptr(unsafe.Pointer(args)), unsafe.Sizeof(*args))
	runtime.KeepAlive(name)
	runtime.KeepAlive(attr)
	runtime.KeepAlive(args)
	return int(r), e
}
