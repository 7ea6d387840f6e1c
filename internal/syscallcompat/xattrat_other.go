//go:build !linux

package syscallcompat

import "syscall"

// getxattrat: there is no way to read the attributes of an entry named
// relative to a directory fd here (no getxattrat, no /proc/self/fd):
// EOPNOTSUPP, which XattrAt passes on. Only the mount reads attributes
// this way.
func getxattrat(dirfd uintptr, name, attr *byte, value uintptr, size int) (int, syscall.Errno) {
	return 0, syscall.EOPNOTSUPP
}
