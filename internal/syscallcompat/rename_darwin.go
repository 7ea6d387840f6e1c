package syscallcompat

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// renameFlags is Renameat2 with flags: RenameNoReplace through
// renameatx_np(RENAME_EXCL), RenameExchange through RENAME_SWAP.
func renameFlags(oldDirfd int, oldName string, newDirfd int, newName string, flags uint) error {
	var x uint32
	switch flags {
	case RenameNoReplace:
		x = unix.RENAME_EXCL
	case RenameExchange:
		x = unix.RENAME_SWAP
	default:
		return syscall.EINVAL
	}
	return Retry(func() error { return unix.RenameatxNp(oldDirfd, oldName, newDirfd, newName, x) })
}
