//go:build !linux

package syscallcompat

import (
	"os"
	"syscall"
	"time"

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
	// RenameWhiteout leaves a whiteout behind (RENAME_WHITEOUT); no
	// system here has it, renameFlags refuses it.
	RenameWhiteout = 0x4
	// UtimeNow and UtimeOmit are the special Nsec values of the
	// utimensat family (the same on macOS and FreeBSD).
	UtimeNow  = -1
	UtimeOmit = -2
	// ODirect is the O_DIRECT open flag; 0: not looked at here.
	ODirect = 0
)

// haveProcFd: there is no O_PATH and no /proc/self/fd here, so
// OpenRegularAt opens with O_NONBLOCK and checks afterwards.
const haveProcFd = false

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
// O_NONBLOCK, which needs reading permission, and only if an fstatat found
// a regular file or a directory, so that no device driver's open routine
// runs and no FIFO or socket is opened; anything else fails with
// EOPNOTSUPP (its attributes cannot be reached here). The opened fd is
// checked again; only a device node swapped in between the two (which
// takes root to create) is opened. The fd works with the *xattr helpers
// below, which use the fd-based calls.
func OpenPathAt(dirfd int, name string) (int, error) {
	var st unix.Stat_t
	if err := Fstatat(dirfd, name, &st); err != nil {
		return -1, err
	}
	if err := regularOrDir(&st); err != nil {
		return -1, err
	}
	fd, err := Openat(dirfd, name, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return -1, err
	}
	if err := Fstat(fd, &st); err != nil {
		Close(fd)
		return -1, err
	}
	if err := regularOrDir(&st); err != nil {
		Close(fd)
		return -1, err
	}
	return fd, nil
}

// regularOrDir fails with ELOOP for a symlink and EOPNOTSUPP for anything
// else that is neither a regular file nor a directory (see OpenPathAt).
func regularOrDir(st *unix.Stat_t) error {
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG, syscall.S_IFDIR:
		return nil
	case syscall.S_IFLNK:
		return syscall.ELOOP
	}
	return syscall.EOPNOTSUPP
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

// FutimesNano sets atime and mtime of the file open at fd. x/sys has no
// futimens here, so it is futimes(2): microsecond resolution, and
// UtimeOmit is the time read by an fstat just before (a change in
// between is overwritten).
func FutimesNano(fd int, ts [2]unix.Timespec) error {
	var st unix.Stat_t
	if ts[0].Nsec == UtimeOmit || ts[1].Nsec == UtimeOmit {
		if err := Fstat(fd, &st); err != nil {
			return err
		}
	}
	now := time.Now().UnixNano()
	cur := [2]unix.Timespec{st.Atim, st.Mtim}
	var tv [2]unix.Timeval
	for i, t := range ts {
		switch t.Nsec {
		case UtimeNow:
			tv[i] = unix.NsecToTimeval(now)
		case UtimeOmit:
			tv[i] = unix.NsecToTimeval(unix.TimespecToNsec(cur[i]))
		default:
			tv[i] = unix.NsecToTimeval(unix.TimespecToNsec(t))
		}
	}
	return Retry(func() error { return unix.Futimes(fd, tv[:]) })
}

// UtimesNanoFd is FutimesNano here: fd is never an O_PATH handle (see
// OpenPathAt).
func UtimesNanoFd(fd int, ts [2]unix.Timespec) error {
	return FutimesNano(fd, ts)
}

// Fdatasync is fsync(2) here (macOS has no fdatasync; on both systems
// fsync does at least what fdatasync does).
func Fdatasync(fd int) error {
	return Retry(func() error { return unix.Fsync(fd) })
}

// ChmodPathFd changes the mode of the file open at fd: fd is a real
// descriptor here (see OpenPathAt), so fchmod(2) takes it.
func ChmodPathFd(fd int, mode uint32) error {
	return Fchmod(fd, mode)
}

// ReopenPathFd cannot open the inode behind fd anew here: there is no
// /proc/self/fd (macOS's /dev/fd duplicates the descriptor with its old
// flags instead). EOPNOTSUPP; the callers (the open of a file without
// owner read permission, forwarded locks and opens checked with the
// caller's identity) are Linux only, see docs/cli.md "Platforms".
func ReopenPathFd(fd int, flags int) (int, error) {
	return -1, syscall.EOPNOTSUPP
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

// The statfs flags of a read-only and of a noatime mount.
const (
	MountRdonly  = unix.MNT_RDONLY
	MountNoatime = unix.MNT_NOATIME
)

// Dup2 makes newfd a copy of oldfd.
func Dup2(oldfd, newfd int) error {
	return unix.Dup2(oldfd, newfd)
}
