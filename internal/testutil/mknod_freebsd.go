package testutil

import "golang.org/x/sys/unix"

// Mknod creates a device node (or other special file) with the device
// number major:minor; the type of that argument differs per system.
func Mknod(path string, mode uint32, major, minor uint32) error {
	return unix.Mknod(path, mode, unix.Mkdev(major, minor))
}
