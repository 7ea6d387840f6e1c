package syscallcompat

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// renameFlags is Renameat2 with flags, which FreeBSD's renameat has not.
// RenameNoReplace is a hard link (which fails with EEXIST, atomically, if
// dstName exists) followed by the removal of the old name; a crash in
// between leaves both names. Directories cannot be linked (EPERM): for
// them the target is checked first, so a dstName created in the window
// between check and rename would be replaced. RenameExchange: EOPNOTSUPP.
func renameFlags(oldDirfd int, oldName string, newDirfd int, newName string, flags uint) error {
	if flags != RenameNoReplace {
		return syscall.EOPNOTSUPP
	}
	err := Linkat(oldDirfd, oldName, newDirfd, newName)
	if err == nil {
		return Unlinkat(oldDirfd, oldName, 0)
	}
	if err != syscall.EPERM {
		return err
	}
	var st unix.Stat_t
	switch err := Fstatat(newDirfd, newName, &st); err {
	case nil:
		return syscall.EEXIST
	case syscall.ENOENT:
	default:
		return err
	}
	return Retry(func() error { return unix.Renameat(oldDirfd, oldName, newDirfd, newName) })
}
