package repair

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/syscallcompat"
)

// Every file operation below works relative to a directory descriptor
// that was opened below the CIPHERDIR descriptor r.root with
// syscallcompat.OpenDirBeneath (openat2 RESOLVE_BENEATH|
// RESOLVE_NO_SYMLINKS, or a component-wise O_NOFOLLOW walk), and acts on a
// single name in it without following a symlink there either (O_NOFOLLOW,
// renameat2, unlinkat, fstatat with AT_SYMLINK_NOFOLLOW). Regular files
// are opened with syscallcompat.OpenFileAt, which never opens a FIFO or a
// device node. Paths relative to CIPHERDIR ("rel") are slash-separated;
// "" is the root.

// LostFoundName is the plaintext directory in the root that receives
// salvaged copies, one subdirectory per run.
const LostFoundName = "lost+found"

// openDir opens the directory rel below CIPHERDIR.
func (r *repairer) openDir(rel string) (int, error) {
	fd, err := syscallcompat.OpenDirBeneath(r.root, rel)
	if err != nil {
		return -1, fmt.Errorf("open directory %q: %w", rel, err)
	}
	return fd, nil
}

// split returns the directory and the last component of rel.
func split(rel string) (string, string) {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return "", rel
	}
	return rel[:i], rel[i+1:]
}

// openParent opens the directory holding rel and returns it with rel's
// last component.
func (r *repairer) openParent(rel string) (int, string, error) {
	dir, name := split(rel)
	if err := syscallcompat.CheckRelPath(rel); err != nil || rel == "" {
		return -1, "", fmt.Errorf("bad path %q: %w", rel, syscall.EINVAL)
	}
	fd, err := r.openDir(dir)
	return fd, name, err
}

// lstat stats rel without following a symlink anywhere.
func (r *repairer) lstat(rel string, st *unix.Stat_t) error {
	if rel == "" {
		return syscallcompat.Fstat(r.root, st)
	}
	dfd, name, err := r.openParent(rel)
	if err != nil {
		return err
	}
	defer syscallcompat.Close(dfd)
	return syscallcompat.Fstatat(dfd, name, st)
}

// exists reports whether rel exists.
func (r *repairer) exists(rel string) bool {
	var st unix.Stat_t
	return r.lstat(rel, &st) == nil
}

// fsyncFd makes a directory's entries (or a file's data) durable.
func fsyncFd(fd int) error {
	if err := syscallcompat.Retry(func() error { return unix.Fsync(fd) }); err != nil {
		return fmt.Errorf("fsync: %w", err)
	}
	return nil
}

// mkdirAll creates the directory rel and its missing parents with mode
// 0700 (fsyncing every parent that got a new entry) and returns it open.
// An existing symlink or non-directory on the way fails.
func (r *repairer) mkdirAll(rel string) (int, error) {
	if err := syscallcompat.CheckRelPath(rel); err != nil {
		return -1, fmt.Errorf("bad path %q: %w", rel, err)
	}
	fd, err := syscallcompat.OpenDirAt(r.root, ".")
	if err != nil {
		return -1, err
	}
	if rel == "" {
		return fd, nil
	}
	for c := range strings.SplitSeq(rel, "/") {
		next, err := syscallcompat.OpenDirAt(fd, c)
		if errors.Is(err, syscall.ENOENT) {
			if err = syscallcompat.Mkdirat(fd, c, 0o700); err == nil || errors.Is(err, syscall.EEXIST) {
				if err = fsyncFd(fd); err == nil {
					next, err = syscallcompat.OpenDirAt(fd, c)
				}
			}
		}
		syscallcompat.Close(fd)
		if err != nil {
			return -1, fmt.Errorf("mkdir %q: %w", rel, err)
		}
		fd = next
	}
	return fd, nil
}

// writeFileAt creates name in dfd afresh (an old entry of that name, our
// own scratch file from an interrupted run or anything planted there, is
// unlinked first, never opened), fills it, sets the permission bits mode
// and fsyncs the file and dfd.
func writeFileAt(dfd int, name string, mode uint32, fill func(fd int) error) error {
	if err := syscallcompat.Unlinkat(dfd, name, 0); err != nil && !errors.Is(err, syscall.ENOENT) {
		return fmt.Errorf("write %s: %w", name, err)
	}
	fd, err := syscallcompat.Openat(dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	err = fill(fd)
	if err == nil {
		err = syscallcompat.Fchmod(fd, mode)
	}
	if err == nil {
		err = fsyncFd(fd)
	}
	if cerr := syscallcompat.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return fsyncFd(dfd)
}

// writeBytes is a fill function writing data.
func writeBytes(data []byte) func(fd int) error {
	return func(fd int) error { return syscallcompat.WriteFull(fd, data) }
}

// tmpDir returns the scratch directory gocryptfs.quarantine/<ts>.tmp
// (kept open until the run ends).
func (r *repairer) tmpDir() (int, error) {
	if r.tfd >= 0 {
		return r.tfd, nil
	}
	if err := r.begin(); err != nil {
		return -1, err
	}
	fd, err := r.mkdirAll(nametransform.QuarantineDirName + "/" + r.ts + ".tmp")
	if err != nil {
		return -1, err
	}
	r.tfd = fd
	return fd, nil
}

// tmpName is the scratch name for the destination key (its path): the
// same for every attempt, so that a rerun continues where a crash
// stopped, and on the same filesystem, so that rename moves it into place
// atomically. Nothing under a final name is ever half written.
func tmpName(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:12])
}

// placeFileAt writes a file under its scratch name and renames it to
// name in dfd, replacing an earlier complete copy of ours, if any. key
// identifies the destination (its path) for the scratch name.
func (r *repairer) placeFileAt(dfd int, name, key string, mode uint32, fill func(fd int) error) error {
	tfd, err := r.tmpDir()
	if err != nil {
		return err
	}
	tmp := tmpName(key)
	if err := writeFileAt(tfd, tmp, mode, fill); err != nil {
		return err
	}
	r.step()
	if err := syscallcompat.Renameat2(tfd, tmp, dfd, name, 0); err != nil {
		return fmt.Errorf("rename to %s: %w", key, err)
	}
	r.step()
	if err := fsyncFd(tfd); err != nil {
		return err
	}
	return fsyncFd(dfd)
}

// placeFile is placeFileAt for the path rel below CIPHERDIR.
func (r *repairer) placeFile(rel string, mode uint32, fill func(fd int) error) error {
	dfd, name, err := r.openParent(rel)
	if err != nil {
		return err
	}
	defer syscallcompat.Close(dfd)
	return r.placeFileAt(dfd, name, rel, mode, fill)
}

// placeNewFile is placeFile for a file that must not exist yet (a
// directory IV): an existing one is left alone and reported as EEXIST.
func (r *repairer) placeNewFile(rel string, mode uint32, data []byte) error {
	dfd, name, err := r.openParent(rel)
	if err != nil {
		return err
	}
	defer syscallcompat.Close(dfd)
	tfd, err := r.tmpDir()
	if err != nil {
		return err
	}
	tmp := tmpName(rel)
	if err := writeFileAt(tfd, tmp, mode, writeBytes(data)); err != nil {
		return err
	}
	r.step()
	return r.moveNew(tfd, tmp, dfd, name)
}

// moveNew renames srcName in srcDfd to dstName in dstDfd (one
// filesystem), never replacing an existing entry, and makes both
// directories durable.
func (r *repairer) moveNew(srcDfd int, srcName string, dstDfd int, dstName string) error {
	if err := syscallcompat.Renameat2(srcDfd, srcName, dstDfd, dstName, syscallcompat.RenameNoReplace); err != nil {
		return fmt.Errorf("rename to %s: %w", dstName, err)
	}
	r.step()
	if err := fsyncFd(srcDfd); err != nil {
		return err
	}
	return fsyncFd(dstDfd)
}

// newDirIV returns 16 random bytes, never all zero.
func newDirIV() []byte {
	iv := make([]byte, nametransform.DirIVLen)
	for allZero(iv) {
		rand.Read(iv)
	}
	return iv
}

// quarantine moves the entry at cipherRel to
// gocryptfs.quarantine/<ts>/<cipherRel> and returns the new relative
// path. An entry already gone whose quarantined copy exists counts as
// done (a rerun after a crash).
func (r *repairer) quarantine(cipherRel string) (string, error) {
	if err := r.begin(); err != nil {
		return "", err
	}
	dir, name := split(cipherRel)
	dstDirRel := join(nametransform.QuarantineDirName+"/"+r.ts, dir)
	dstRel := join(dstDirRel, name)
	sfd, _, err := r.openParent(cipherRel)
	if err != nil {
		return "", fmt.Errorf("quarantine %s: %w", cipherRel, err)
	}
	defer syscallcompat.Close(sfd)
	var st unix.Stat_t
	if err := syscallcompat.Fstatat(sfd, name, &st); errors.Is(err, syscall.ENOENT) {
		if r.exists(dstRel) {
			return dstRel, nil
		}
		return "", fmt.Errorf("quarantine %s: %w", cipherRel, err)
	}
	dfd, err := r.mkdirAll(dstDirRel)
	if err != nil {
		return "", fmt.Errorf("quarantine %s: %w", cipherRel, err)
	}
	defer syscallcompat.Close(dfd)
	// A second entry at the same path in one run (e.g. a file moved away
	// and a salvaged one put in its place, damaged again) gets a suffix:
	// rename must never replace an earlier original.
	dstName := name
	for i := 2; syscallcompat.Fstatat(dfd, dstName, &st) == nil; i++ {
		dstName = fmt.Sprintf("%s.%d", name, i)
	}
	if err := r.moveNew(sfd, name, dfd, dstName); err != nil {
		return "", fmt.Errorf("quarantine %s: %w", cipherRel, err)
	}
	return join(dstDirRel, dstName), nil
}

// quarantineCopy puts a copy of the regular file at cipherRel into the
// quarantine (for a file that is repaired in place) and returns its
// relative path. Holes stay holes.
func (r *repairer) quarantineCopy(cipherRel string) (string, error) {
	if err := r.begin(); err != nil {
		return "", err
	}
	dir, name := split(cipherRel)
	dstDirRel := join(nametransform.QuarantineDirName+"/"+r.ts, dir)
	sfd, err := r.openFile(cipherRel, unix.O_RDONLY)
	if err != nil {
		return "", err
	}
	defer syscallcompat.Close(sfd)
	dfd, err := r.mkdirAll(dstDirRel)
	if err != nil {
		return "", err
	}
	defer syscallcompat.Close(dfd)
	// Written under a scratch name first: a crash must never leave a
	// partial copy under the final name, which a rerun would trust.
	if err := r.placeFileAt(dfd, name, join(dstDirRel, name), 0o400, func(fd int) error {
		return copySparse(fd, sfd, dfd)
	}); err != nil {
		return "", err
	}
	return join(dstDirRel, name), nil
}

// openFile opens the regular file rel (never a FIFO or device node).
func (r *repairer) openFile(rel string, flags int) (int, error) {
	dfd, name, err := r.openParent(rel)
	if err != nil {
		return -1, err
	}
	defer syscallcompat.Close(dfd)
	fd, err := syscallcompat.OpenFileAt(dfd, name, flags)
	if err != nil {
		return -1, fmt.Errorf("open %s: %w", rel, err)
	}
	return fd, nil
}

// copyBuf is the size of one read and write of copySparse.
const copyBuf = 1 << 20

// copySparse copies the regular file src to the empty file dst, data
// extents only: holes stay holes (a sparse file of 2 GiB with little data
// costs little). It first checks that the filesystem of spaceFd has room
// for the data.
func copySparse(dst, src, spaceFd int) error {
	var st unix.Stat_t
	if err := syscallcompat.Fstat(src, &st); err != nil {
		return err
	}
	ext, err := syscallcompat.DataExtents(src, st.Size)
	if err != nil {
		return err
	}
	var need int64
	for _, e := range ext {
		need += e.Len
	}
	if err := checkSpace(spaceFd, need); err != nil {
		return err
	}
	buf := make([]byte, min(copyBuf, need))
	for _, e := range ext {
		for off, end := e.Off, e.Off+e.Len; off < end; {
			n, err := syscallcompat.PreadFull(src, buf[:min(int64(len(buf)), end-off)], off)
			if err != nil {
				return err
			}
			if n == 0 {
				break // shrunk meanwhile
			}
			if err := syscallcompat.PwriteFull(dst, buf[:n], off); err != nil {
				return err
			}
			off += int64(n)
		}
	}
	return syscallcompat.Ftruncate(dst, st.Size)
}

// spaceMargin is kept free on the filesystem beyond what a copy needs
// (metadata, the journal, other writers).
const spaceMargin = 1 << 20

// checkSpace fails with an error wrapping ENOSPC unless the filesystem
// holding fd has need bytes (plus a margin) available to unprivileged
// writers.
func checkSpace(fd int, need int64) error {
	var sf unix.Statfs_t
	if err := syscallcompat.Fstatfs(fd, &sf); err != nil {
		return err
	}
	avail := availableBytes(&sf)
	if need+spaceMargin > avail {
		return fmt.Errorf("not enough free space for a copy of %d bytes (%d available): %w", need, avail, syscall.ENOSPC)
	}
	return nil
}

// lfDir makes sure the plaintext directory lost+found/<ts>/<plainDir>
// exists and returns its ciphertext path relative to CIPHERDIR and its IV.
func (r *repairer) lfDir(plainDir string) (string, []byte, error) {
	if err := r.begin(); err != nil {
		return "", nil, err
	}
	comps := []string{LostFoundName, r.ts}
	if plainDir != "" {
		comps = append(comps, strings.Split(plainDir, "/")...)
	}
	cdir := ""
	iv, err := r.dirIV(cdir)
	if err != nil {
		return "", nil, err
	}
	for _, c := range comps {
		if !validComponent(c) {
			return "", nil, fmt.Errorf("bad name %q: %w", c, syscall.EINVAL)
		}
		stored, err := r.storedName(cdir, c, iv)
		if err != nil {
			return "", nil, err
		}
		cdir = join(cdir, stored)
		if err := r.placeDir(cdir); err != nil {
			return "", nil, err
		}
		if iv, err = r.dirIV(cdir); err != nil {
			return "", nil, err
		}
	}
	return cdir, iv, nil
}

// placeDir creates the encrypted directory rel unless it exists:
// prepared with its IV under a scratch name, then renamed into place, so
// that it never exists without its IV.
func (r *repairer) placeDir(rel string) error {
	dfd, name, err := r.openParent(rel)
	if err != nil {
		return err
	}
	defer syscallcompat.Close(dfd)
	var st unix.Stat_t
	if err := syscallcompat.Fstatat(dfd, name, &st); err == nil {
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return fmt.Errorf("%s: not a directory", rel)
		}
		return nil
	}
	tfd, err := r.tmpDir()
	if err != nil {
		return err
	}
	tmp := tmpName(rel)
	if err := syscallcompat.Mkdirat(tfd, tmp, 0o700); err == nil {
		r.step()
	} else if !errors.Is(err, syscall.EEXIST) {
		return err
	}
	if r.nt.UsesDirIV() {
		nfd, err := syscallcompat.OpenDirAt(tfd, tmp)
		if err != nil {
			return err
		}
		defer syscallcompat.Close(nfd)
		// A kill while writing it can leave it short: check the bytes.
		if _, err := nametransform.ReadDirIVAt(nfd); err != nil {
			if err := writeFileAt(nfd, nametransform.DirIVFilename, 0o444, writeBytes(newDirIV())); err != nil {
				return err
			}
			r.step()
		}
	}
	return r.moveNew(tfd, tmp, dfd, name)
}

// dirIV reads the IV of a ciphertext directory (nil without directory IVs).
func (r *repairer) dirIV(cipherDir string) ([]byte, error) {
	if !r.nt.UsesDirIV() {
		return nil, nil
	}
	fd, err := r.openDir(cipherDir)
	if err != nil {
		return nil, err
	}
	defer syscallcompat.Close(fd)
	return nametransform.ReadDirIVAt(fd)
}

// storedName encrypts plain for the directory cipherDir with IV iv,
// writing the long-name companion file if the name is hashed.
func (r *repairer) storedName(cipherDir, plain string, iv []byte) (string, error) {
	enc, err := r.nt.EncryptName(plain, iv)
	if err != nil {
		return "", err
	}
	stored, long := r.nt.HashIfLong(enc)
	if long {
		fd, err := r.openDir(cipherDir)
		if err != nil {
			return "", err
		}
		defer syscallcompat.Close(fd)
		if old, err := nametransform.ReadLongNameAt(fd, stored); err != nil || old != enc {
			nf := nametransform.LongNameFilename(stored)
			if err := r.placeFileAt(fd, nf, join(cipherDir, nf), 0o444, writeBytes([]byte(enc))); err != nil {
				return "", err
			}
		}
	}
	return stored, nil
}

// lfPath returns the ciphertext path (relative to CIPHERDIR) for the
// plaintext path lost+found/<ts>/<plainRel>, creating its directories.
func (r *repairer) lfPath(plainRel string) (string, error) {
	dir, base := split(r.lfRel(plainRel))
	if !validComponent(base) {
		return "", fmt.Errorf("bad name %q: %w", base, syscall.EINVAL)
	}
	cdir, iv, err := r.lfDir(dir)
	if err != nil {
		return "", err
	}
	stored, err := r.storedName(cdir, base, iv)
	if err != nil {
		return "", err
	}
	return join(cdir, stored), nil
}

// lfShown is how a salvaged item is named in reports.
func (r *repairer) lfShown(plainRel string) string {
	return LostFoundName + "/" + r.ts + "/" + r.lfRel(plainRel)
}

// lfRel maps a plaintext path to its place below lost+found/<ts>. A path
// that is already there (damage inside a subtree this run copied) keeps
// its place instead of nesting lost+found/<ts>/lost+found/<ts>/...
func (r *repairer) lfRel(plainRel string) string {
	prefix := LostFoundName + "/" + r.ts + "/"
	if rest, ok := strings.CutPrefix(plainRel, prefix); ok {
		return rest
	}
	return plainRel
}

// salvageTree copies the ciphertext entry srcRel to dstRel verbatim (see
// copyTree). A directory is assembled under its scratch name and renamed
// into place when complete; an existing dst is such a complete copy from
// an earlier, interrupted run.
func (r *repairer) salvageTree(srcRel, dstRel string) error {
	if r.exists(dstRel) {
		return nil
	}
	sfd, sname, err := r.openParent(srcRel)
	if err != nil {
		return err
	}
	defer syscallcompat.Close(sfd)
	dfd, dname, err := r.openParent(dstRel)
	if err != nil {
		return err
	}
	defer syscallcompat.Close(dfd)
	var st unix.Stat_t
	if err := syscallcompat.Fstatat(sfd, sname, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return r.copyTree(sfd, sname, srcRel, dfd, dname, dstRel)
	}
	tfd, err := r.tmpDir()
	if err != nil {
		return err
	}
	tmp := tmpName(dstRel)
	if err := r.copyTree(sfd, sname, srcRel, tfd, tmp, "tmp:"+dstRel); err != nil {
		return err
	}
	return r.moveNew(tfd, tmp, dfd, dname)
}

// copyTree copies the ciphertext entry sname of sfd (srcRel, for
// reports) to dname in dfd (key names the destination for scratch names)
// verbatim: file contents (holes kept), symlink targets, directories with
// everything in them (gocryptfs.diriv and .name files included, so the
// names inside stay valid). FIFOs, sockets and device nodes are never
// opened nor recreated: each is reported and stays in the quarantine with
// the original. What an interrupted earlier attempt left at dname is
// completed or overwritten.
func (r *repairer) copyTree(sfd int, sname, srcRel string, dfd int, dname, key string) error {
	var st unix.Stat_t
	if err := syscallcompat.Fstatat(sfd, sname, &st); err != nil {
		return err
	}
	perm := uint32(st.Mode) & 0o7777
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		if err := syscallcompat.Mkdirat(dfd, dname, 0o700); err == nil {
			r.step()
		} else if !errors.Is(err, syscall.EEXIST) {
			return err
		}
		src, err := syscallcompat.OpenDirAt(sfd, sname)
		if err != nil {
			return err
		}
		defer syscallcompat.Close(src)
		dst, err := syscallcompat.OpenDirAt(dfd, dname)
		if err != nil {
			return err
		}
		defer syscallcompat.Close(dst)
		// Writable while it fills (a rerun finds it with its final bits).
		if err := syscallcompat.Fchmod(dst, perm|0o700); err != nil {
			return err
		}
		ents, err := syscallcompat.Getdents(src)
		if err != nil {
			return err
		}
		names := make([]string, 0, len(ents))
		for _, e := range ents {
			names = append(names, e.Name)
		}
		slices.Sort(names)
		for _, n := range names {
			if err := r.copyTree(src, n, srcRel+"/"+n, dst, n, key+"/"+n); err != nil {
				return err
			}
		}
		if err := syscallcompat.Fchmod(dst, perm); err != nil {
			return err
		}
		return fsyncFd(dst)
	case unix.S_IFREG:
		in, err := syscallcompat.OpenFileAt(sfd, sname, unix.O_RDONLY)
		if err != nil {
			return err
		}
		defer syscallcompat.Close(in)
		return r.placeFileAt(dfd, dname, key, perm, func(fd int) error { return copySparse(fd, in, dfd) })
	case unix.S_IFLNK:
		target, err := syscallcompat.Readlinkat(sfd, sname)
		if err != nil {
			return err
		}
		if old, err := syscallcompat.Readlinkat(dfd, dname); err == nil && old == target {
			return nil
		}
		// Our own partial copy, if any.
		if err := syscallcompat.Unlinkat(dfd, dname, 0); err != nil && !errors.Is(err, syscall.ENOENT) {
			return err
		}
		if err := syscallcompat.Symlinkat(target, dfd, dname); err != nil {
			return err
		}
		r.step()
		return fsyncFd(dfd)
	default:
		r.emit(Event{Type: "action", Action: "not-copied", CipherPath: srcRel,
			Error: specialNote(uint32(st.Mode))})
		return nil
	}
}

// specialNote explains why a FIFO, socket or device node has no copy.
func specialNote(mode uint32) string {
	kind := "special file"
	switch mode & unix.S_IFMT {
	case unix.S_IFIFO:
		kind = "named pipe"
	case unix.S_IFSOCK:
		kind = "socket"
	case unix.S_IFCHR:
		kind = "character device"
	case unix.S_IFBLK:
		kind = "block device"
	}
	return kind + ": never opened nor recreated by repair; the original stays in the quarantine"
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	if name == "" {
		return dir
	}
	return dir + "/" + name
}
