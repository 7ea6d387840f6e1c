// Package syscallcompat wraps the Linux system calls that the filesystem
// frontends make on CIPHERDIR so that every one of them is relative to an
// already opened directory fd and never follows a symlink in the final
// component. A symlink swapped in by another user can therefore not redirect
// an operation outside of CIPHERDIR.
//
// All helpers retry on EINTR (the Go runtime preempts threads with SIGURG,
// which interrupts slow system calls on network and FUSE backing stores) and
// return the bare syscall.Errno (as error) so callers can use errors.Is.
package syscallcompat

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// maxEINTR bounds the EINTR retries of one call: a call that is interrupted
// this often in a row is stuck in a signal storm and reports EINTR.
const maxEINTR = 100

// Interrupted (EINTR) is what a request that waits on behalf of a caller
// returns when the caller was signalled (a FUSE INTERRUPT): the kernel
// then fails or restarts the caller's system call, as its own waits do.
const Interrupted = syscall.EINTR

// Retry calls fn until it returns something other than EINTR.
func Retry(fn func() error) error {
	var err error
	for range maxEINTR {
		err = fn()
		if err != syscall.EINTR {
			return err
		}
	}
	return err
}

// fullIO repeats op on the rest of buf until all of buf is done. EINTR is
// retried (boundedly) so that a signal cannot turn into a short count; a
// count of zero ends the loop with zeroErr (nil for reads: end of file).
// op gets the rest of buf and how much is done already.
func fullIO(buf []byte, zeroErr error, op func(rest []byte, done int) (int, error)) (int, error) {
	done, eintr := 0, 0
	for done < len(buf) {
		n, err := op(buf[done:], done)
		if err == syscall.EINTR && eintr < maxEINTR {
			eintr++
			continue
		}
		if err != nil {
			return done, err
		}
		if n == 0 {
			return done, zeroErr
		}
		done += n
	}
	return done, nil
}

// PreadFull reads into buf at off until buf is full or end of file; a
// short count with a nil error means end of file was reached.
func PreadFull(fd int, buf []byte, off int64) (int, error) {
	return fullIO(buf, nil, func(rest []byte, done int) (int, error) { return unix.Pread(fd, rest, off+int64(done)) })
}

// ReadFull is PreadFull at the file position.
func ReadFull(fd int, buf []byte) (int, error) {
	return fullIO(buf, nil, func(rest []byte, _ int) (int, error) { return unix.Read(fd, rest) })
}

// PwriteFull writes all of buf at off. A short write without an error
// from the kernel (which happens when the disk fills up mid-way) is retried
// for the remainder so that the real error, usually ENOSPC, surfaces; a
// write of nothing is EIO.
func PwriteFull(fd int, buf []byte, off int64) error {
	_, err := fullIO(buf, syscall.EIO, func(rest []byte, done int) (int, error) { return unix.Pwrite(fd, rest, off+int64(done)) })
	return err
}

// WriteFull is PwriteFull at the file position.
func WriteFull(fd int, buf []byte) error {
	_, err := fullIO(buf, syscall.EIO, func(rest []byte, _ int) (int, error) { return unix.Write(fd, rest) })
	return err
}

// Ftruncate sets the size of the file behind fd.
func Ftruncate(fd int, size int64) error {
	return Retry(func() error { return unix.Ftruncate(fd, size) })
}

// Lseek is lseek(2).
func Lseek(fd int, off int64, whence int) (int64, error) {
	var res int64
	err := Retry(func() error {
		var err error
		res, err = unix.Seek(fd, off, whence)
		return err
	})
	return res, err
}

// RetryInt is Retry for calls that also return an int (fds, byte counts).
func RetryInt(fn func() (int, error)) (int, error) {
	var n int
	var err error
	for range maxEINTR {
		n, err = fn()
		if err != syscall.EINTR {
			return n, err
		}
	}
	return n, err
}

// Openat opens name relative to dirfd. O_NOFOLLOW and O_CLOEXEC are always
// added, so a symlink in the last component fails with ELOOP.
func Openat(dirfd int, name string, flags int, mode uint32) (int, error) {
	flags |= unix.O_NOFOLLOW | unix.O_CLOEXEC
	return RetryInt(func() (int, error) { return unix.Openat(dirfd, name, flags, mode) })
}

// OpenDirAt opens the directory name relative to dirfd for reading, without
// following a symlink. "." reopens dirfd itself.
func OpenDirAt(dirfd int, name string) (int, error) {
	return Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
}

// OpenFileAt opens the regular file name in dirfd with flags (O_NOFOLLOW
// and O_CLOEXEC are added; O_CREAT is not supported). It never opens
// anything else: a FIFO, socket or device node that someone with write
// access to the directory swapped in must neither block the caller (a FIFO
// opened for reading waits for a writer) nor have its driver's open
// routine run. The entry is pinned with O_PATH, which has no such effects,
// checked, and reopened through /proc/self/fd, which names exactly the
// pinned inode. Without /proc it is opened with O_NONBLOCK and checked
// afterwards (a FIFO then cannot block; a device node's open routine runs,
// which only matters if an attacker can create device nodes). A directory
// fails with EISDIR, a symlink with ELOOP, anything else with EINVAL.
func OpenFileAt(dirfd int, name string, flags int) (int, error) {
	var st unix.Stat_t
	return OpenRegularAt(dirfd, name, flags, &st)
}

// OpenRegularAt is OpenFileAt that also fills st with the stat of the
// opened file, taken on the pinned inode before it was opened: callers
// that need the stat (the inode for the content lock table, the change
// stamp of the page cache) save an fstat on the new fd. An OPEN then
// costs four system calls (openat O_PATH, fstat, open of the /proc link,
// close of the pin). The stat is as fresh as one taken right after the
// open: the inode is the same, and its content can change in either gap.
func OpenRegularAt(dirfd int, name string, flags int, st *unix.Stat_t) (int, error) {
	if !haveProcFd {
		// No O_PATH pin to reopen: straight to the fallback below.
		return openFileAt(dirfd, name, flags, st, nil)
	}
	return openFileAt(dirfd, name, flags, st, ProcFdPath)
}

// openFileAt is OpenRegularAt with the /proc path of an fd supplied by
// the caller, so that tests can take the fallback path; nil takes it
// without trying /proc (systems without O_PATH and /proc/self/fd).
func openFileAt(dirfd int, name string, flags int, st *unix.Stat_t, procPath func(int) string) (int, error) {
	if flags&unix.O_CREAT != 0 {
		return -1, syscall.EINVAL
	}
	if procPath != nil {
		fd, noProc, err := openPinned(dirfd, name, flags, st, procPath)
		if !noProc {
			return fd, err
		}
	}
	// /proc is not mounted.
	fd, err := Openat(dirfd, name, flags|unix.O_NONBLOCK, 0)
	if err != nil {
		return -1, err
	}
	if err := checkRegular(fd, st); err != nil {
		Close(fd)
		return -1, err
	}
	if flags&unix.O_NONBLOCK == 0 {
		if err := Retry(func() error {
			fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
			if err != nil {
				return err
			}
			_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl&^unix.O_NONBLOCK)
			return err
		}); err != nil {
			Close(fd)
			return -1, err
		}
	}
	return fd, nil
}

// openPinned is the way of openFileAt through an O_PATH pin and its /proc
// path; noProc reports that /proc is not mounted (the reopen found no
// such path).
func openPinned(dirfd int, name string, flags int, st *unix.Stat_t, procPath func(int) string) (fd int, noProc bool, err error) {
	pfd, err := OpenPathAt(dirfd, name)
	if err != nil {
		return -1, false, err
	}
	defer Close(pfd)
	if err := checkRegular(pfd, st); err != nil {
		return -1, false, err
	}
	p := procPath(pfd)
	// No O_NOFOLLOW here: the magic link itself must be followed.
	fd, err = RetryInt(func() (int, error) { return unix.Open(p, flags|unix.O_CLOEXEC, 0) })
	return fd, err == syscall.ENOENT, err
}

// checkRegular fails unless fd is a regular file (see OpenFileAt); st
// receives its stat.
func checkRegular(fd int, st *unix.Stat_t) error {
	if err := Fstat(fd, st); err != nil {
		return err
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return nil
	case syscall.S_IFDIR:
		return syscall.EISDIR
	case syscall.S_IFLNK:
		return syscall.ELOOP
	}
	return syscall.EINVAL
}

// WalkDirs opens relPath (slash-separated, relative to baseFd) component by
// component with O_NOFOLLOW|O_DIRECTORY, so that no symlink anywhere on the
// path is followed. "" and "." return a new fd for baseFd itself. The caller
// closes the returned fd.
func WalkDirs(baseFd int, relPath string) (int, error) {
	fd, err := OpenDirAt(baseFd, ".")
	if err != nil {
		return -1, err
	}
	for comp := range strings.SplitSeq(relPath, "/") {
		if comp == "" || comp == "." {
			continue
		}
		if comp == ".." {
			syscall.Close(fd)
			return -1, syscall.EINVAL
		}
		next, err := OpenDirAt(fd, comp)
		syscall.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

// Fstatat stats name relative to dirfd without following a symlink.
func Fstatat(dirfd int, name string, st *unix.Stat_t) error {
	return Retry(func() error { return unix.Fstatat(dirfd, name, st, unix.AT_SYMLINK_NOFOLLOW) })
}

// Fstat stats an open fd (also an O_PATH one).
func Fstat(fd int, st *unix.Stat_t) error {
	return Retry(func() error { return unix.Fstat(fd, st) })
}

// Mkdirat creates directory name in dirfd.
func Mkdirat(dirfd int, name string, mode uint32) error {
	return Retry(func() error { return unix.Mkdirat(dirfd, name, mode) })
}

// Symlinkat creates the symlink name in dirfd pointing to target.
func Symlinkat(target string, dirfd int, name string) error {
	return Retry(func() error { return unix.Symlinkat(target, dirfd, name) })
}

// Linkat creates a hard link newName in newDirfd to oldName in oldDirfd. A
// symlink oldName is linked itself, never followed.
func Linkat(oldDirfd int, oldName string, newDirfd int, newName string) error {
	return Retry(func() error { return unix.Linkat(oldDirfd, oldName, newDirfd, newName, 0) })
}

// Unlinkat removes name from dirfd; flags may be unix.AT_REMOVEDIR.
func Unlinkat(dirfd int, name string, flags int) error {
	return Retry(func() error { return unix.Unlinkat(dirfd, name, flags) })
}

// Readlinkat returns the target of the symlink name in dirfd, whatever its
// length.
func Readlinkat(dirfd int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := RetryInt(func() (int, error) { return unix.Readlinkat(dirfd, name, buf) })
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
		if size > 1<<20 {
			return "", syscall.ENAMETOOLONG
		}
	}
}

// Fchownat changes the owner of name in dirfd; a symlink is changed itself.
func Fchownat(dirfd int, name string, uid, gid int) error {
	return Retry(func() error { return unix.Fchownat(dirfd, name, uid, gid, unix.AT_SYMLINK_NOFOLLOW) })
}

// Fchmodat changes the permission bits of name in dirfd without following a
// symlink. It uses fchmodat2(AT_SYMLINK_NOFOLLOW) and falls back to an
// O_PATH handle plus /proc/self/fd on kernels without it. Symlinks have no
// changeable mode on Linux: the result for them is EOPNOTSUPP.
func Fchmodat(dirfd int, name string, mode uint32) error {
	err := Retry(func() error { return unix.Fchmodat(dirfd, name, mode, unix.AT_SYMLINK_NOFOLLOW) })
	if err != syscall.EOPNOTSUPP && err != syscall.ENOSYS {
		return err
	}
	fd, err := OpenPathAt(dirfd, name)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	var st unix.Stat_t
	if err := Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&syscall.S_IFMT == syscall.S_IFLNK {
		return syscall.EOPNOTSUPP
	}
	// The magic link resolves to the opened inode, never to a path that
	// could have been swapped since the open.
	return Retry(func() error { return unix.Chmod(ProcFdPath(fd), mode) })
}

// Fchmod changes the permission bits of an open (non-O_PATH) fd.
func Fchmod(fd int, mode uint32) error {
	return Retry(func() error { return unix.Fchmod(fd, mode) })
}

// Fchown changes the owner of an open fd.
func Fchown(fd int, uid, gid int) error {
	return Retry(func() error { return unix.Fchown(fd, uid, gid) })
}

// UtimesNanoAt sets atime and mtime of name in dirfd without following a
// symlink. ts[i].Nsec may be unix.UTIME_NOW or unix.UTIME_OMIT.
func UtimesNanoAt(dirfd int, name string, ts [2]unix.Timespec) error {
	return Retry(func() error { return unix.UtimesNanoAt(dirfd, name, ts[:], unix.AT_SYMLINK_NOFOLLOW) })
}

// ProcFdPath returns /proc/self/fd/<fd>, a path that names exactly the
// inode behind fd. It lets path-only calls (xattrs on O_PATH fds, chmod)
// act on an inode that was opened without following symlinks.
func ProcFdPath(fd int) string {
	return "/proc/self/fd/" + strconv.Itoa(fd)
}

// FgetxattrAll returns the whole value of attr, growing the buffer as needed.
func FgetxattrAll(fd int, attr string) ([]byte, error) {
	buf := make([]byte, 256)
	for range 10 {
		n, err := Fgetxattr(fd, attr, buf)
		if err == nil {
			return buf[:n], nil
		}
		if err != syscall.ERANGE {
			return nil, err
		}
		size, err := Fgetxattr(fd, attr, nil)
		if err != nil {
			return nil, err
		}
		buf = make([]byte, max(size, 2*len(buf)))
	}
	return nil, syscall.ERANGE
}

// DirEntry is one entry returned by Getdents.
type DirEntry struct {
	// Name is the entry name (never "." or "..").
	Name string
	// Ino is the inode number from the directory entry.
	Ino uint64
	// Type is the file type as S_IFMT bits (0 when the filesystem does not
	// report it; call Fstatat then).
	Type uint32
}

// ErrBadDirent reports a malformed linux_dirent64 record from the kernel.
var ErrBadDirent = errors.New("malformed dirent record")

// parseDirents decodes linux_dirent64 records:
// u64 ino, s64 off, u16 reclen, u8 type, name NUL-terminated.
func parseDirents(buf []byte, out []DirEntry) ([]DirEntry, error) {
	for len(buf) > 0 {
		if len(buf) < 19 {
			return out, ErrBadDirent
		}
		ino := binary.NativeEndian.Uint64(buf[0:8])
		reclen := int(binary.NativeEndian.Uint16(buf[16:18]))
		if reclen < 19 || reclen > len(buf) {
			return out, ErrBadDirent
		}
		typ := buf[18]
		name := buf[19:reclen]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		buf = buf[reclen:]
		if s := string(name); s != "." && s != ".." {
			out = append(out, DirEntry{Name: s, Ino: ino, Type: dtToMode(typ)})
		}
	}
	return out, nil
}

func dtToMode(dt uint8) uint32 {
	switch dt {
	case unix.DT_REG:
		return syscall.S_IFREG
	case unix.DT_DIR:
		return syscall.S_IFDIR
	case unix.DT_LNK:
		return syscall.S_IFLNK
	case unix.DT_FIFO:
		return syscall.S_IFIFO
	case unix.DT_SOCK:
		return syscall.S_IFSOCK
	case unix.DT_CHR:
		return syscall.S_IFCHR
	case unix.DT_BLK:
		return syscall.S_IFBLK
	}
	return 0
}

// Dup duplicates fd with O_CLOEXEC.
func Dup(fd int) (int, error) {
	return RetryInt(func() (int, error) { return unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0) })
}

// Fstatfs reports filesystem statistics for the filesystem holding fd.
func Fstatfs(fd int, st *unix.Statfs_t) error {
	return Retry(func() error { return unix.Fstatfs(fd, st) })
}

// Close closes fd, ignoring EINTR (on Linux the fd is released even then).
func Close(fd int) error {
	err := unix.Close(fd)
	if err == syscall.EINTR {
		return nil
	}
	return err
}

// listxattrNames returns the attribute names that list (a listxattr of
// one inode into buf; nil asks for the size) reports, growing the buffer
// while the list grows between the calls.
func listxattrNames(list func(buf []byte) (int, error)) ([]string, error) {
	buf := make([]byte, 1024)
	for range 10 {
		n, err := RetryInt(func() (int, error) { return list(buf) })
		if err == syscall.ERANGE {
			size, err := RetryInt(func() (int, error) { return list(nil) })
			if err != nil {
				return nil, err
			}
			buf = make([]byte, max(size, 2*len(buf)))
			continue
		}
		if err != nil {
			return nil, err
		}
		var names []string
		for name := range strings.SplitSeq(string(buf[:n]), "\x00") {
			if name != "" {
				names = append(names, name)
			}
		}
		return names, nil
	}
	return nil, syscall.ERANGE
}
