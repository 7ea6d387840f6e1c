//go:build !linux

package syscallcompat

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// The Linux-only calls on other systems (macOS, FreeBSD). Only the parts
// of the program that run there (creating and checking a filesystem, its
// configuration, names and contents; not the mount) need them to work;
// the others report EOPNOTSUPP, as a filesystem without the feature would.

// Flags of Fallocate and Renameat2, with the Linux values, so that callers
// need no Linux-only constants.
const (
	// FallocKeepSize keeps the file size (FALLOC_FL_KEEP_SIZE).
	FallocKeepSize = 0x1
	// FallocPunchHole deallocates the range (FALLOC_FL_PUNCH_HOLE).
	FallocPunchHole = 0x2
	// RenameNoReplace fails with EEXIST if the target exists
	// (RENAME_NOREPLACE).
	RenameNoReplace = 0x1
	// RenameExchange swaps source and target (RENAME_EXCHANGE).
	RenameExchange = 0x2
)

// NoatimeFlag is the open flag that leaves the access time alone
// (O_NOATIME on Linux); 0: there is none here.
const NoatimeFlag = 0

// NoAttr is the error of reading an extended attribute that is not
// there (ENOATTR here, ENODATA on Linux).
const NoAttr = unix.ENOATTR

// Fallocate is not available here: EOPNOTSUPP, which callers already
// treat as a backing filesystem without preallocation.
func Fallocate(fd int, mode uint32, off, length int64) error {
	return syscall.EOPNOTSUPP
}

// OpenPathAt opens name relative to dirfd without following a symlink
// (ELOOP). There is no O_PATH here: the entry is opened for reading with
// O_NONBLOCK, so a FIFO cannot block the caller, but reading permission is
// needed and a device node's open routine runs. The fd works with the
// *xattr helpers below, which use the fd-based calls.
func OpenPathAt(dirfd int, name string) (int, error) {
	return Openat(dirfd, name, unix.O_RDONLY|unix.O_NONBLOCK, 0)
}

// Mknodat is not available here (only the mount creates special files).
func Mknodat(dirfd int, name string, mode uint32, dev uint64) error {
	return syscall.EOPNOTSUPP
}

// Renameat2 renames oldName to newName without following a symlink. The
// flags are emulated per system (renameFlags): on macOS both through
// renameatx_np, on FreeBSD only RenameNoReplace.
func Renameat2(oldDirfd int, oldName string, newDirfd int, newName string, flags uint) error {
	if flags == 0 {
		return Retry(func() error { return unix.Renameat(oldDirfd, oldName, newDirfd, newName) })
	}
	return renameFlags(oldDirfd, oldName, newDirfd, newName, flags)
}

// FutimesNano is not available here (only the mount sets times by fd).
func FutimesNano(fd int, ts [2]unix.Timespec) error {
	return syscall.EOPNOTSUPP
}

// Fgetxattr reads attribute attr of the file open at fd into dest and
// returns the value length. An empty dest asks for the size only.
func Fgetxattr(fd int, attr string, dest []byte) (int, error) {
	return RetryInt(func() (int, error) { return unix.Fgetxattr(fd, attr, dest) })
}

// Fsetxattr sets attribute attr of the file open at fd.
func Fsetxattr(fd int, attr string, value []byte, flags int) error {
	return Retry(func() error { return unix.Fsetxattr(fd, attr, value, flags) })
}

// Fremovexattr removes attribute attr of the file open at fd.
func Fremovexattr(fd int, attr string) error {
	return Retry(func() error { return unix.Fremovexattr(fd, attr) })
}

// FlistxattrAll returns the attribute names of the file open at fd.
func FlistxattrAll(fd int) ([]string, error) {
	return listxattrNames(func(buf []byte) (int, error) { return unix.Flistxattr(fd, buf) })
}

// Getdents lists the directory open at fd, skipping "." and "..", through
// the portable directory reader (the record formats differ per system).
// Ino comes from an fstatat of each entry (0 if it vanished meanwhile).
func Getdents(fd int) ([]DirEntry, error) {
	dfd, err := Dup(fd)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dfd), "")
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	out := make([]DirEntry, 0, len(ents))
	for _, e := range ents {
		d := DirEntry{Name: e.Name(), Type: fileModeToType(e.Type())}
		var st unix.Stat_t
		if Fstatat(fd, d.Name, &st) == nil {
			d.Ino = uint64(st.Ino)
		}
		out = append(out, d)
	}
	return out, nil
}

// fileModeToType converts the type bits of an os.FileMode to S_IFMT bits
// (0 if unknown).
func fileModeToType(m os.FileMode) uint32 {
	switch m.Type() {
	case 0:
		return syscall.S_IFREG
	case os.ModeDir:
		return syscall.S_IFDIR
	case os.ModeSymlink:
		return syscall.S_IFLNK
	case os.ModeNamedPipe:
		return syscall.S_IFIFO
	case os.ModeSocket:
		return syscall.S_IFSOCK
	case os.ModeDevice | os.ModeCharDevice:
		return syscall.S_IFCHR
	case os.ModeDevice:
		return syscall.S_IFBLK
	}
	return 0
}
