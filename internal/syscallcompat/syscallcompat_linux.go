//go:build linux

package syscallcompat

import (
	"golang.org/x/sys/unix"
)

// Fallocate allocates [off, off+length) of the file behind fd.
func Fallocate(fd int, mode uint32, off, length int64) error {
	return Retry(func() error { return unix.Fallocate(fd, mode, off, length) })
}

// OpenPathAt opens name relative to dirfd with O_PATH|O_NOFOLLOW: a handle
// on the entry itself (also on a symlink, fifo or device) that permits no
// I/O but can be used with the *Fd helpers below through /proc/self/fd.
func OpenPathAt(dirfd int, name string) (int, error) {
	return Openat(dirfd, name, unix.O_PATH, 0)
}

// Mknodat creates a device node, fifo, socket or regular file name in dirfd.
func Mknodat(dirfd int, name string, mode uint32, dev uint64) error {
	return Retry(func() error { return unix.Mknodat(dirfd, name, mode, int(dev)) })
}

// Renameat2 renames with renameat2(2) flags (unix.RENAME_NOREPLACE,
// unix.RENAME_EXCHANGE, or 0). Neither name is followed if it is a symlink.
func Renameat2(oldDirfd int, oldName string, newDirfd int, newName string, flags uint) error {
	return Retry(func() error { return unix.Renameat2(oldDirfd, oldName, newDirfd, newName, flags) })
}

// FutimesNano sets atime and mtime of an open fd (also an O_PATH one).
func FutimesNano(fd int, ts [2]unix.Timespec) error {
	// utimensat(fd, NULL, ...) is what futimens(3) does; x/sys does not
	// accept an empty path, so use AT_EMPTY_PATH, which also covers O_PATH.
	return Retry(func() error { return unix.UtimesNanoAt(fd, "", ts[:], unix.AT_EMPTY_PATH) })
}

// Fgetxattr reads attribute attr of the inode behind fd (any fd, also
// O_PATH) into dest and returns the value length. An empty dest asks for the
// size only.
func Fgetxattr(fd int, attr string, dest []byte) (int, error) {
	p := ProcFdPath(fd)
	return RetryInt(func() (int, error) { return unix.Getxattr(p, attr, dest) })
}

// Fsetxattr sets attribute attr of the inode behind fd (any fd).
func Fsetxattr(fd int, attr string, value []byte, flags int) error {
	p := ProcFdPath(fd)
	return Retry(func() error { return unix.Setxattr(p, attr, value, flags) })
}

// Fremovexattr removes attribute attr of the inode behind fd (any fd).
func Fremovexattr(fd int, attr string) error {
	p := ProcFdPath(fd)
	return Retry(func() error { return unix.Removexattr(p, attr) })
}

// FlistxattrAll returns the attribute names of the inode behind fd
// (through /proc/self/fd, which also serves O_PATH descriptors).
func FlistxattrAll(fd int) ([]string, error) {
	p := ProcFdPath(fd)
	return listxattrNames(func(buf []byte) (int, error) { return unix.Listxattr(p, buf) })
}

// Getdents lists the directory open at fd from its current offset to the
// end, skipping "." and "..". The fd must have been opened for reading.
func Getdents(fd int) ([]DirEntry, error) {
	var out []DirEntry
	buf := make([]byte, 32*1024)
	for {
		n, err := RetryInt(func() (int, error) { return unix.Getdents(fd, buf) })
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return out, nil
		}
		out, err = parseDirents(buf[:n], out)
		if err != nil {
			return nil, err
		}
	}
}

// Flags of Fallocate and Renameat2 under names that exist on every
// system (see syscallcompat_other.go).
const (
	// FallocKeepSize keeps the file size (FALLOC_FL_KEEP_SIZE).
	FallocKeepSize = unix.FALLOC_FL_KEEP_SIZE
	// FallocPunchHole deallocates the range (FALLOC_FL_PUNCH_HOLE).
	FallocPunchHole = unix.FALLOC_FL_PUNCH_HOLE
	// RenameNoReplace fails with EEXIST if the target exists.
	RenameNoReplace = unix.RENAME_NOREPLACE
	// RenameExchange swaps source and target.
	RenameExchange = unix.RENAME_EXCHANGE
)

// NoatimeFlag is the open flag that leaves the access time alone
// (O_NOATIME); 0 where the system has none.
const NoatimeFlag = unix.O_NOATIME

// NoAttr is the error of reading an extended attribute that is not
// there (ENODATA on Linux, ENOATTR elsewhere).
const NoAttr = unix.ENODATA

// More Linux flags under portable names (see syscallcompat_other.go).
const (
	// RenameWhiteout leaves a whiteout behind (RENAME_WHITEOUT).
	RenameWhiteout = unix.RENAME_WHITEOUT
	// UtimeNow and UtimeOmit are the special Nsec values of the
	// utimensat family: set the time to now, leave it alone.
	UtimeNow  = unix.UTIME_NOW
	UtimeOmit = unix.UTIME_OMIT
	// ODirect is the O_DIRECT open flag.
	ODirect = unix.O_DIRECT
)

// haveProcFd: O_PATH handles and /proc/self/fd exist here (see
// OpenRegularAt).
const haveProcFd = true

// Fdatasync flushes the data of the file behind fd (and the metadata
// needed to read it back).
func Fdatasync(fd int) error {
	return Retry(func() error { return unix.Fdatasync(fd) })
}

// ChmodPathFd changes the mode of the inode behind fd, also an O_PATH fd,
// which fchmod(2) refuses: through ProcFdPath, which names the open inode
// itself, so nothing is looked up by name and no symlink is followed.
func ChmodPathFd(fd int, mode uint32) error {
	return Retry(func() error { return unix.Chmod(ProcFdPath(fd), mode) })
}

// ReopenPathFd opens the inode behind fd, also an O_PATH fd, anew with
// flags (O_CLOEXEC added), through ProcFdPath (see ChmodPathFd). The
// permission check is that of an open of the inode by its mode.
func ReopenPathFd(fd int, flags int) (int, error) {
	return RetryInt(func() (int, error) { return unix.Open(ProcFdPath(fd), flags|unix.O_CLOEXEC, 0) })
}

// UtimesNanoFd sets atime and mtime of the inode behind fd (also an
// O_PATH fd) through ProcFdPath: unlike FutimesNano it needs no
// AT_EMPTY_PATH support of utimensat (Linux 5.8).
func UtimesNanoFd(fd int, ts [2]unix.Timespec) error {
	return Retry(func() error { return unix.UtimesNanoAt(unix.AT_FDCWD, ProcFdPath(fd), ts[:], 0) })
}

// The statfs flags of a read-only and of a noatime mount.
const (
	MountRdonly  = unix.ST_RDONLY
	MountNoatime = unix.ST_NOATIME
)

// Dup2 makes newfd a copy of oldfd (dup3 without flags: linux/arm64 has
// no dup2 system call).
func Dup2(oldfd, newfd int) error {
	return unix.Dup3(oldfd, newfd, 0)
}
