package fusefrontend

import (
	"context"
	"errors"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/cryptocore"
	"gocryptfs/internal/fuseutil"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/syscallcompat"
)

var _ = (fs.NodeReaddirer)((*Node)(nil))

// Readdir lists directory n: backing entries are decrypted, internal files
// (config, diriv, long-name companions) are hidden, and undecryptable names
// are hidden with one warning each, or shown when they match -badname.
// The list starts with "." and "..", as on a local filesystem.
// Directory-entry inode numbers are translated like those of Lookup, so
// READDIRPLUS agrees with this list.
func (n *Node) Readdir(ctx context.Context) (ds fs.DirStream, errno syscall.Errno) {
	return n.readdir(-1)
}

// readdir is Readdir through the backing directory fd of an open
// directory handle, or through a fresh fd if fd is -1.
func (n *Node) readdir(fd int) (ds fs.DirStream, errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Readdir", &errno)
	rn.enter("Readdir")
	var l *listing
	var err error
	if fd < 0 {
		l, err = rn.readDir(n.relPath())
	} else {
		l, err = rn.readDirFd(n.relPath(), fd)
	}
	if err != nil {
		return nil, n.toErrno("Readdir", err)
	}
	l.n = n
	l.ents = append(fuseutil.DotEntries(n.EmbeddedInode()), l.ents...)
	l.cNames = append([]string{".", ".."}, l.cNames...)
	return l, 0
}

// readDir reads and decrypts the backing directory of the plaintext
// directory dir. The returned listing keeps the backing directory open
// (for READDIRPLUS lookups) until it is closed.
func (rn *RootNode) readDir(dir string) (*listing, error) {
	ref, iv, err := rn.openDirRef(dir)
	if err != nil {
		return nil, err
	}
	// A fresh open file description: the cached fd may be shared by
	// concurrent readers, and getdents advances the offset.
	dfd, err := rn.openNoatime(unix.O_RDONLY|unix.O_DIRECTORY, func(fl int) (int, error) {
		return syscallcompat.Openat(ref.fd, ".", fl, 0)
	})
	ref.release()
	if err != nil {
		return nil, err
	}
	l, err := rn.listDir(dir, dfd, iv)
	if err != nil {
		syscallcompat.Close(dfd)
		return nil, err
	}
	return l, nil
}

// readDirFd is readDir through dfd, the backing directory fd of an open
// directory handle, positioned at its start; the listing borrows it and
// never closes it. This saves opening and closing the directory once more
// per listing. The IV is that of the directory at the plaintext path
// dir, which is the directory of the handle unless someone renamed it
// behind the mount's back in between (then, as when listing by path at
// that moment, names may not decrypt).
func (rn *RootNode) readDirFd(dir string, dfd int) (*listing, error) {
	ref, iv, err := rn.openDirRef(dir)
	if err != nil {
		return nil, err
	}
	ref.release()
	l, err := rn.listDir(dir, dfd, iv)
	if err != nil {
		return nil, err
	}
	l.borrowed = true
	return l, nil
}

// listDir reads and decrypts the backing directory dfd (from its current
// offset) of the plaintext directory dir, whose IV is iv, as
// nametransform.DecodeDir decodes it: undecryptable names and invalid
// copies of the IV file are hidden with one warning each.
func (rn *RootNode) listDir(dir string, dfd int, iv []byte) (*listing, error) {
	var dst unix.Stat_t
	if err := syscallcompat.Fstat(dfd, &dst); err != nil {
		return nil, err
	}
	ents, err := syscallcompat.Getdents(dfd)
	if err != nil {
		return nil, err
	}
	l := &listing{dfd: dfd, ents: make([]fuse.DirEntry, 0, len(ents)), cNames: make([]string, 0, len(ents))}
	rn.nt.DecodeDir(dfd, ents, iv, dir == "", func(e nametransform.DecodedEntry) {
		switch e.Outcome {
		case nametransform.Shown:
			rn.rememberListed(iv, e.Name, e.Backing.Name)
			rn.addDirEntry(l, dfd, &dst, e.Backing, e.Name)
		case nametransform.ShownConflict, nametransform.ShownBadName:
			rn.addDirEntry(l, dfd, &dst, e.Backing, e.Name)
		case nametransform.Undecryptable:
			if rn.firstWarn("name:" + dir + "/" + e.Backing.Name) {
				rn.log.Warn("undecryptable name hidden", "dir", rn.cipherPath(dir), "name", e.Backing.Name, "err", e.Err)
			}
		case nametransform.BadAltIV:
			rn.warnBadAltIV(e.Backing.Name, e.Err)
		}
	})
	return l, nil
}

// addDirEntry adds the backing entry de of the directory dfd (whose stat
// is dst) to l under the plaintext name.
func (rn *RootNode) addDirEntry(l *listing, dfd int, dst *unix.Stat_t, de syscallcompat.DirEntry, name string) {
	typ := de.Type
	if typ == 0 {
		var st unix.Stat_t
		if err := syscallcompat.Fstatat(dfd, de.Name, &st); err != nil {
			return // vanished meanwhile
		}
		typ = uint32(st.Mode & syscall.S_IFMT)
	}
	ino := rn.shownIno(&unix.Stat_t{Dev: dst.Dev, Ino: de.Ino})
	l.ents = append(l.ents, fuse.DirEntry{Name: name, Mode: typ, Ino: ino})
	l.cNames = append(l.cNames, de.Name)
}

// writeLongName creates the companion file of a long-named entry before
// the entry itself. The returned undo removes it again if creating the
// entry fails; a companion that already existed (the entry exists, or a
// leftover) is kept and never removed by undo.
func (rn *RootNode) writeLongName(e *entry) (undo func(), err error) {
	if !e.isLong() {
		return func() {}, nil
	}
	var st unix.Stat_t
	if syscallcompat.Fstatat(e.dirfd, nametransform.LongNameFilename(e.cName), &st) == nil {
		// Already there (the entry exists, or a leftover with the same
		// content, which WriteLongNameAt verifies): never remove it.
		return func() {}, rn.nt.WriteLongNameAt(e.dirfd, e.cName, e.longEnc)
	}
	err = rn.nt.WriteLongNameAt(e.dirfd, e.cName, e.longEnc)
	if err != nil {
		return nil, err
	}
	return func() { rn.deleteLongName(e) }, nil
}

// deleteLongName removes the companion file of a long-named entry that no
// longer exists. The companion is shared with sync tools' conflict
// copies of the entry (conflict.go): it stays while the entry or one of
// them exists.
func (rn *RootNode) deleteLongName(e *entry) {
	base := e.cName
	var st unix.Stat_t
	switch {
	case e.longBase != "":
		base = e.longBase
		if syscallcompat.Fstatat(e.dirfd, base, &st) == nil {
			return
		}
	case !e.isLong():
		return
	}
	if rn.longNameShared(e.dirfd, base) {
		return
	}
	if err := nametransform.DeleteLongNameAt(e.dirfd, base); err != nil && !errors.Is(err, syscall.ENOENT) {
		rn.log.Warn("could not delete long name file", "name", base, "err", err)
	}
}

// needsChmod reports whether the process umask may have cut bits of mode
// when creating a backing entry, so that it must be set explicitly.
func (rn *RootNode) needsChmod(mode uint32) bool {
	return mode&rn.umask&0o7777 != 0 || mode&0o7000 != 0
}

// prepareCreate resolves dir/name for creating a new entry and checks that
// the name may be created. The new entry gets the regular encryption of
// the name. The conflict-copy and -badname names that child would also
// try are not looked for: the kernel sends a create request only for a
// name its LOOKUP (which tries them) just found absent, and skipping them
// saves a stat of the entry and one of the directory per created file.
func (n *Node) prepareCreate(name string) (*entry, error) {
	rn := n.rn
	if rn.args.ReadOnly {
		return nil, syscall.EROFS
	}
	dir := n.relPath()
	if rn.reserved(dir, name) {
		return nil, syscall.EPERM
	}
	return rn.childRegular(dir, name)
}

// finishCreate stats a just created entry and makes its inode; fresh
// tells a new inode from a new name of an existing one (link), see
// newFreshChild.
func (n *Node) finishCreate(ctx context.Context, e *entry, fresh bool, out *fuse.EntryOut) (*fs.Inode, error) {
	var st unix.Stat_t
	if err := syscallcompat.Fstatat(e.dirfd, e.cName, &st); err != nil {
		return nil, err
	}
	return n.finishCreateStat(ctx, e, &st, fresh, out), nil
}

// finishCreateStat is finishCreate with the entry's current stat st.
func (n *Node) finishCreateStat(ctx context.Context, e *entry, st *unix.Stat_t, fresh bool, out *fuse.EntryOut) *fs.Inode {
	n.rn.fillAttr(st, e.dirfd, e.cName, &out.Attr)
	n.rn.touchAltIVs(e.dirfd)
	if fresh {
		return n.newFreshChild(ctx, st)
	}
	return n.newChild(ctx, st)
}

var _ = (fs.NodeMkdirer)((*Node)(nil))

// Mkdir creates a directory and, with directory IVs, its gocryptfs.diriv.
// The directory is created with at least 0700 so that the IV file can be
// written into it, then set to the requested mode (keeping a setgid bit
// inherited from the parent). If the IV cannot be written the directory is
// removed again.
func (n *Node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (ch *fs.Inode, errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Mkdir", &errno)
	rn.enter("Mkdir")
	ch, err := n.mkdir(ctx, name, mode, out)
	return ch, n.toErrno("Mkdir", err)
}

func (n *Node) mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, error) {
	rn := n.rn
	e, err := n.prepareCreate(name)
	if err != nil {
		return nil, err
	}
	defer e.close()
	// In a directory with a default ACL the backing filesystem derives
	// the mode and ACLs from the requested mode, so it is created with
	// exactly that mode and never chmodded (the caller must then be able
	// to write the IV file into it).
	mode, inherit := rn.modeFor(ctx, e.dirfd, mode&0o7777)
	useIV := rn.nt.UsesDirIV()
	perm := mode
	if useIV && !inherit {
		perm |= 0o700 // the IV file must be written into it
	}
	// The directory and its IV file are created as the caller, so both
	// are owned by the caller and get the group the kernel picks.
	fd := -1
	var undo func()
	created := false
	err = rn.asCaller(ctx, func() error {
		var err error
		if undo, err = rn.writeLongName(e); err != nil {
			return err
		}
		if err := syscallcompat.Mkdirat(e.dirfd, e.cName, perm); err != nil {
			undo()
			return err
		}
		created = true
		if !useIV {
			return nil
		}
		if fd, err = syscallcompat.OpenDirAt(e.dirfd, e.cName); err != nil {
			return err
		}
		// WriteDirIVAt removes a partial file itself.
		_, err = nametransform.WriteDirIVAt(fd)
		return err
	})
	if fd >= 0 {
		defer syscallcompat.Close(fd)
	}
	fail := func(err error) (*fs.Inode, error) {
		if err2 := syscallcompat.Unlinkat(e.dirfd, e.cName, unix.AT_REMOVEDIR); err2 != nil {
			rn.log.Warn("mkdir: could not remove directory after failure", "name", e.cName, "err", err2)
		}
		undo()
		return nil, err
	}
	switch {
	case err != nil && !created:
		return nil, err
	case err != nil:
		return fail(err)
	case !useIV:
		if !inherit && rn.needsChmod(mode) {
			var st unix.Stat_t
			err := syscallcompat.Fstatat(e.dirfd, e.cName, &st)
			if err == nil {
				// Keep an inherited set-group-ID bit (see below).
				err = syscallcompat.Fchmodat(e.dirfd, e.cName, mode|uint32(st.Mode&syscall.S_ISGID))
			}
			if err != nil {
				rn.log.Warn("mkdir: chmod failed", "err", err)
			}
		}
		return n.finishCreate(ctx, e, true, out)
	}
	// failIV undoes the mkdir once the IV file exists: the directory
	// cannot be removed while it holds it.
	failIV := func(err error) (*fs.Inode, error) {
		if err2 := syscallcompat.Unlinkat(fd, nametransform.DirIVFilename, 0); err2 != nil {
			rn.log.Warn("mkdir: could not remove the IV file after a failure", "name", e.cName, "err", err2)
		}
		return fail(err)
	}
	var st unix.Stat_t
	if err := syscallcompat.Fstat(fd, &st); err != nil {
		return failIV(err)
	}
	if err := rn.inject("mkdir-chmod"); err != nil {
		return failIV(err)
	}
	if inherit {
		return n.finishCreate(ctx, e, true, out)
	}
	want := mode | uint32(st.Mode&syscall.S_ISGID)
	if uint32(st.Mode&0o7777) == want {
		// Created with the right mode already (the usual case: the
		// daemon's umask is 0 and the mode includes 0700): the stat
		// taken after the IV file was written is the entry's.
		return n.finishCreateStat(ctx, e, &st, true, out), nil
	}
	// As the daemon, not the caller: a directory created in a
	// set-group-ID directory keeps the inherited bit even when the caller
	// is not a member of the group, as on a local filesystem, and a chmod
	// by a non-member would drop it.
	if err := syscallcompat.Fchmod(fd, want); err != nil {
		return failIV(err)
	}
	return n.finishCreate(ctx, e, true, out)
}

var _ = (fs.NodeRmdirer)((*Node)(nil))

// Rmdir removes an empty directory; one that holds nothing but its
// gocryptfs.diriv is empty in the plaintext view.
func (n *Node) Rmdir(ctx context.Context, name string) (errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Rmdir", &errno)
	rn.enter("Rmdir")
	if rn.args.ReadOnly {
		return syscall.EROFS
	}
	dir := n.relPath()
	// The regular name first, as in Unlink: a conflict copy or -badname
	// name costs a stat of the entry and one of the directory to look
	// for, which rm -rf would pay for every directory.
	e, err := rn.childRegular(dir, name)
	if err != nil {
		return n.toErrno("Rmdir", err)
	}
	defer func() { e.close() }()
	err = rn.rmdirEntry(e)
	if errors.Is(err, syscall.ENOENT) {
		e.close()
		if e, err = rn.child(dir, name); err != nil {
			return n.toErrno("Rmdir", err)
		}
		err = rn.rmdirEntry(e)
	}
	rn.dirCache.invalidate(joinPath(dir, name))
	if err == nil {
		rn.reuse.removed(n.GetChild(name))
	}
	return n.toErrno("Rmdir", err)
}

// rmdirEntry removes the backing directory of e (and its long-name file).
func (rn *RootNode) rmdirEntry(e *entry) error {
	err := rn.onEmptiedDir(e, func() error {
		if err := rn.inject("rmdir"); err != nil {
			return err
		}
		return syscallcompat.Unlinkat(e.dirfd, e.cName, unix.AT_REMOVEDIR)
	})
	if err != nil {
		return err
	}
	rn.deleteLongName(e)
	return nil
}

// onEmptiedDir runs fn, which removes or replaces the backing directory e,
// while e is empty for the kernel. A directory that is empty in the
// plaintext view still holds its gocryptfs.diriv, so rmdir(2) and
// rename(2) over it fail with ENOTEMPTY: the IV file is first moved out
// into the parent under a random name. If fn fails, it is moved back (and
// a mode changed to list the directory is restored), so that a failed
// operation leaves the directory as it was; if fn succeeds, the moved IV
// file is deleted. A directory holding anything else fails with ENOTEMPTY
// before anything is changed.
func (rn *RootNode) onEmptiedDir(e *entry, fn func() error) error {
	if !rn.nt.UsesDirIV() {
		return fn()
	}
	fd, err := syscallcompat.OpenDirAt(e.dirfd, e.cName)
	restoreMode := func() {}
	if errors.Is(err, syscall.EACCES) {
		fd, restoreMode, err = rn.openDirChmod(e)
	}
	if err != nil {
		return err
	}
	defer syscallcompat.Close(fd)
	ents, err := syscallcompat.Getdents(fd)
	if err != nil {
		restoreMode()
		return err
	}
	ents, err = rn.dropIVCopies(fd, ents)
	if err != nil {
		restoreMode()
		return err
	}
	switch {
	case len(ents) == 0:
		// No IV file (damaged directory): nothing to move.
		if err := fn(); err != nil {
			restoreMode()
			return err
		}
		return nil
	case len(ents) > 1 || ents[0].Name != nametransform.DirIVFilename:
		restoreMode()
		return syscall.ENOTEMPTY
	}
	tmp := nametransform.DirIVFilename + ".rmdir." + uitoa(randUint64())
	if err := syscallcompat.Renameat2(fd, nametransform.DirIVFilename, e.dirfd, tmp, syscallcompat.RenameNoReplace); err != nil {
		restoreMode()
		return err
	}
	if err := fn(); err != nil {
		if err2 := syscallcompat.Renameat2(e.dirfd, tmp, fd, nametransform.DirIVFilename, syscallcompat.RenameNoReplace); err2 != nil {
			rn.log.Error("could not restore the directory IV after a failed operation", "dir", e.cName, "tmp", tmp, "err", err2)
		}
		restoreMode()
		return err
	}
	if err := syscallcompat.Unlinkat(e.dirfd, tmp, 0); err != nil {
		rn.log.Warn("could not delete a moved directory IV", "tmp", tmp, "err", err)
	}
	return nil
}

// openDirChmod opens directory e after adding owner rwx permission, so
// that its owner can remove it even when its mode is 000 (the IV file must
// be listed and moved out). restore puts the original mode back; the
// caller calls it unless the directory was removed.
func (rn *RootNode) openDirChmod(e *entry) (fd int, restore func(), err error) {
	var st unix.Stat_t
	if err := syscallcompat.Fstatat(e.dirfd, e.cName, &st); err != nil {
		return -1, nil, err
	}
	orig := uint32(st.Mode & 0o7777)
	if err := syscallcompat.Fchmodat(e.dirfd, e.cName, orig|0o700); err != nil {
		return -1, nil, syscall.EACCES
	}
	restore = func() {
		if err := syscallcompat.Fchmodat(e.dirfd, e.cName, orig); err != nil {
			rn.log.Warn("rmdir: could not restore directory mode", "name", e.cName, "err", err)
		}
	}
	fd, err = syscallcompat.OpenDirAt(e.dirfd, e.cName)
	if err != nil {
		restore()
		return -1, nil, err
	}
	return fd, restore, nil
}

func randUint64() uint64 {
	b := cryptocore.RandBytes(8)
	var v uint64
	for _, x := range b {
		v = v<<8 | uint64(x)
	}
	return v
}

var _ = (fs.NodeUnlinker)((*Node)(nil))

// Unlink removes a non-directory entry and its long-name file.
func (n *Node) Unlink(ctx context.Context, name string) (errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Unlink", &errno)
	rn.enter("Unlink")
	if rn.args.ReadOnly {
		return syscall.EROFS
	}
	dir := n.relPath()
	// The regular name first: rm -rf then costs one unlinkat per file.
	e, err := rn.childRegular(dir, name)
	if err != nil {
		return n.toErrno("Unlink", err)
	}
	err = syscallcompat.Unlinkat(e.dirfd, e.cName, 0)
	if errors.Is(err, syscall.ENOENT) {
		e.close()
		if e, err = rn.child(dir, name); err != nil {
			return n.toErrno("Unlink", err)
		}
		err = syscallcompat.Unlinkat(e.dirfd, e.cName, 0)
	}
	defer e.close()
	if err != nil {
		return n.toErrno("Unlink", err)
	}
	// Before go-fuse drops the child: its inode number may come back.
	rn.reuse.removed(n.GetChild(name))
	rn.deleteLongName(e)
	return 0
}

// nodeOf returns the *Node behind an InodeEmbedder passed in by go-fuse.
func nodeOf(ie fs.InodeEmbedder) *Node {
	switch v := ie.(type) {
	case *Node:
		return v
	case *RootNode:
		return &v.Node
	}
	return nil
}

var _ = (fs.NodeRenamer)((*Node)(nil))

// Rename moves an entry, also between directories (the name is
// re-encrypted with the destination directory's IV; a directory keeps its
// IV file, so names inside stay valid). Supports RENAME_NOREPLACE,
// RENAME_EXCHANGE and RENAME_WHITEOUT (the backing rename leaves the
// whiteout, a 0/0 character device, under the source's backing name, which
// decrypts to the source's name).
func (n *Node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) (errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Rename", &errno)
	rn.enter("Rename")
	var victim *fs.Inode
	if flags&renameExchange == 0 {
		victim = newParent.EmbeddedInode().GetChild(newName)
	}
	err := n.rename(name, newParent, newName, flags)
	if err == nil && victim != nil && victim != n.GetChild(name) {
		// Replaced: its inode number may come back.
		rn.reuse.removed(victim)
	}
	if np := nodeOf(newParent); np != nil {
		rn.dirCache.invalidate(joinPath(n.relPath(), name), joinPath(np.relPath(), newName))
	} else {
		rn.dirCache.clear()
	}
	return n.toErrno("Rename", err)
}

// joinPath joins a plaintext directory path ("" is the root) and a name.
func joinPath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

func (n *Node) rename(name string, newParent fs.InodeEmbedder, newName string, flags uint32) error {
	rn := n.rn
	if rn.args.ReadOnly {
		return syscall.EROFS
	}
	if flags&^(renameNoReplace|renameExchange|renameWhiteout) != 0 {
		return syscall.EINVAL
	}
	np := nodeOf(newParent)
	if np == nil {
		return syscall.EXDEV
	}
	srcDir, dstDir := n.relPath(), np.relPath()
	if rn.reserved(dstDir, newName) || rn.reserved(srcDir, name) {
		return syscall.EPERM
	}
	src, err := rn.child(srcDir, name)
	if err != nil {
		return err
	}
	defer src.close()
	dst, err := rn.child(dstDir, newName)
	if err != nil {
		return err
	}
	defer dst.close()
	if flags&renameExchange != 0 {
		// Both names stay in place, so their companion files stay valid.
		return syscallcompat.Renameat2(src.dirfd, src.cName, dst.dirfd, dst.cName, backingRenameFlags(flags))
	}
	undo, err := rn.writeLongName(dst)
	if err != nil {
		return err
	}
	doRename := func() error {
		if err := rn.inject("rename"); err != nil {
			return err
		}
		return syscallcompat.Renameat2(src.dirfd, src.cName, dst.dirfd, dst.cName, backingRenameFlags(flags))
	}
	err = doRename()
	if (errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST)) && flags&renameNoReplace == 0 {
		// The target may be a directory that is empty in the plaintext
		// view but still holds its gocryptfs.diriv. Replace it while its
		// IV file is moved out, so that it survives a failed rename.
		var st unix.Stat_t
		if syscallcompat.Fstatat(dst.dirfd, dst.cName, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
			err = rn.onEmptiedDir(dst, doRename)
		}
	}
	if err != nil {
		undo()
		return err
	}
	if (src.isLong() || src.longBase != "") && flags&renameWhiteout == 0 {
		// rename(2) between two hard links of one inode succeeds without
		// removing the source; only drop the companion if it is gone.
		// A whiteout takes the source's name, so it keeps the companion.
		var st unix.Stat_t
		if errors.Is(syscallcompat.Fstatat(src.dirfd, src.cName, &st), syscall.ENOENT) {
			rn.deleteLongName(src)
		}
	}
	return nil
}

var _ = (fs.NodeSymlinker)((*Node)(nil))

// Symlink creates a symlink with an encrypted target.
func (n *Node) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (ch *fs.Inode, errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Symlink", &errno)
	rn.enter("Symlink")
	ch, err := n.symlink(ctx, target, name, out)
	return ch, n.toErrno("Symlink", err)
}

func (n *Node) symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, error) {
	rn := n.rn
	e, err := n.prepareCreate(name)
	if err != nil {
		return nil, err
	}
	defer e.close()
	cTarget := target
	if !rn.nt.PlaintextNames() {
		cTarget, err = rn.nt.EncryptSymlinkTarget(target)
		if err != nil {
			return nil, err
		}
	}
	err = rn.asCaller(ctx, func() error {
		undo, err := rn.writeLongName(e)
		if err != nil {
			return err
		}
		if err := syscallcompat.Symlinkat(cTarget, e.dirfd, e.cName); err != nil {
			undo()
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return n.finishCreate(ctx, e, true, out)
}

var _ = (fs.NodeReadlinker)((*Node)(nil))

// Readlink returns the decrypted symlink target (EIO if it is corrupt).
func (n *Node) Readlink(ctx context.Context) (target []byte, errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Readlink", &errno)
	rn.enter("Readlink")
	e, err := n.self()
	if err != nil {
		return nil, n.toErrno("Readlink", err)
	}
	defer e.close()
	t, err := syscallcompat.Readlinkat(e.dirfd, e.cName)
	if err != nil {
		return nil, n.toErrno("Readlink", err)
	}
	if rn.nt.PlaintextNames() {
		return []byte(t), 0
	}
	plain, err := rn.nt.DecryptSymlinkTarget(t)
	if err != nil {
		if p := n.relPath(); rn.firstWarn("symlink:" + p) {
			rn.log.Warn("undecryptable symlink target", "path", rn.cipherPath(p), "err", err)
		}
		return nil, n.toErrno("Readlink", err)
	}
	return []byte(plain), 0
}

var _ = (fs.NodeLinker)((*Node)(nil))

// Link creates a hard link; a long new name gets its own companion file.
func (n *Node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (ch *fs.Inode, errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Link", &errno)
	rn.enter("Link")
	ch, err := n.link(ctx, target, name, out)
	return ch, n.toErrno("Link", err)
}

func (n *Node) link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, error) {
	rn := n.rn
	tn := nodeOf(target)
	if tn == nil {
		return nil, syscall.EXDEV
	}
	dst, err := n.prepareCreate(name)
	if err != nil {
		return nil, err
	}
	defer dst.close()
	if u := tn.unnamedFile(); u != nil {
		if _, p := tn.Parent(); p == nil {
			return rn.linkUnnamed(ctx, n, u, dst, out)
		}
	}
	src, err := tn.self()
	if err != nil {
		return nil, err
	}
	defer src.close()
	undo, err := rn.writeLongName(dst)
	if err != nil {
		return nil, err
	}
	if err := syscallcompat.Linkat(src.dirfd, src.cName, dst.dirfd, dst.cName); err != nil {
		undo()
		return nil, err
	}
	return n.finishCreate(ctx, dst, false, out)
}

// linkUnnamed gives an O_TMPFILE file its first name.
func (rn *RootNode) linkUnnamed(ctx context.Context, n *Node, u *unnamed, dst *entry, out *fuse.EntryOut) (*fs.Inode, error) {
	undo, err := rn.writeLongName(dst)
	if err != nil {
		return nil, err
	}
	if err := u.linkTo(dst.dirfd, dst.cName); err != nil {
		undo()
		return nil, err
	}
	return n.finishCreate(ctx, dst, false, out)
}

var _ = (fs.NodeMknoder)((*Node)(nil))

// Mknod creates a fifo, socket, device node or empty regular file.
func (n *Node) Mknod(ctx context.Context, name string, mode uint32, dev uint32, out *fuse.EntryOut) (ch *fs.Inode, errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Mknod", &errno)
	rn.enter("Mknod")
	ch, err := n.mknod(ctx, name, mode, dev, out)
	return ch, n.toErrno("Mknod", err)
}

func (n *Node) mknod(ctx context.Context, name string, mode uint32, dev uint32, out *fuse.EntryOut) (*fs.Inode, error) {
	rn := n.rn
	e, err := n.prepareCreate(name)
	if err != nil {
		return nil, err
	}
	defer e.close()
	perm, inherit := rn.modeFor(ctx, e.dirfd, mode&0o7777)
	mode = mode&syscall.S_IFMT | perm
	err = rn.asCaller(ctx, func() error {
		undo, err := rn.writeLongName(e)
		if err != nil {
			return err
		}
		if err := syscallcompat.Mknodat(e.dirfd, e.cName, mode, uint64(dev)); err != nil {
			undo()
			return err
		}
		// As the caller, so that the kernel drops a set-group-ID bit
		// that the caller may not set.
		if !inherit && rn.needsChmod(mode) {
			if err := syscallcompat.Fchmodat(e.dirfd, e.cName, mode&0o7777); err != nil {
				rn.log.Warn("mknod: chmod failed", "err", err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return n.finishCreate(ctx, e, true, out)
}
