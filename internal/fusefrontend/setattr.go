package fusefrontend

import (
	"context"
	"errors"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/contentio"
	"gocryptfs/internal/fuseutil"
	"gocryptfs/internal/syscallcompat"
)

var _ = (fs.NodeSetattrer)((*Node)(nil))

// Setattr changes mode, owner, size and timestamps, through the open
// handle when the kernel passes one (ftruncate, fchmod, futimens also work
// on unlinked files) or through an open handle of the directory (the
// kernel sends none for fchmod), else on the backing entry without following
// symlinks. A size change goes through contentio (docs/format.md 4.7).
//
// Under the writeback cache the kernel sends one for every unlink(2) of a
// regular file (the ctime it keeps changed) and three per file tar
// extracts (times, owner, mode), so the path case costs the changes and
// one stat: the entry is taken under its regular name first and looked
// for under a conflict or -badname name only when that name is gone (as
// Unlink does), and set-id bits are cleared after the final stat, which
// tells whether there are any.
//
// Under the writeback cache a change of mtime or size holds the node's
// mtime keeper exclusively around the change (docs/internals.md, section 7).
func (n *Node) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) (errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Setattr", &errno)
	rn.enter("Setattr")
	if rn.args.ReadOnly {
		return syscall.EROFS
	}
	f, _ := fh.(*file)
	var e *entry
	p, regular := "", false
	if f == nil {
		if fd := rn.openDirs.dupFd(n); fd >= 0 {
			// An open directory: act on the directory that was
			// opened, which may no longer have a path.
			e = &entry{dirfd: fd, cName: "."}
		} else if n.orphan() {
			return n.setattrOrphan(in, out)
		} else {
			var err error
			p = n.relPath()
			if p == "" {
				e, err = rn.resolve(p)
			} else {
				e, err = rn.childRegular(splitPath(p))
				regular = true
			}
			if err != nil {
				return n.toErrno("Setattr", err)
			}
		}
		defer func() { e.close() }()
	}
	if rn.args.Writeback && in.Valid&(fuse.FATTR_MTIME|fuse.FATTR_SIZE) != 0 && n.StableAttr().Mode == syscall.S_IFREG {
		// Exclude page-cache writes while the times change
		// (wbmtime.go); only regular files have any.
		mt := n.mtime()
		mt.mu.Lock()
		defer mt.mu.Unlock()
		mt.valid = false
		if in.Valid&fuse.FATTR_MTIME != 0 && in.Valid&fuse.FATTR_MTIME_NOW == 0 && in.Valid&fuse.FATTR_SIZE == 0 {
			defer func() {
				if errno == 0 {
					mt.ts = unix.Timespec{Sec: int64(in.Mtime), Nsec: int64(in.Mtimensec)}
					mt.valid = true
				}
			}()
		}
	}
	changed, err := rn.setattrStat(ctx, f, e, in, out)
	if regular && !changed && errors.Is(err, syscall.ENOENT) {
		// Not under the regular name: a conflict copy or -badname
		// name shown under this one (child), if any.
		e.close()
		if e, err = rn.child(splitPath(p)); err != nil {
			return n.toErrno("Setattr", err)
		}
		_, err = rn.setattrStat(ctx, f, e, in, out)
	}
	return n.toErrno("Setattr", err)
}

// orphanTimes are the attributes the kernel writes back from its own
// inode under the writeback cache (fuse_flush_times: mtime and ctime, and
// a handle if one is open for writing).
const orphanTimes = fuse.FATTR_ATIME | fuse.FATTR_MTIME | fuse.FATTR_CTIME | fuse.FATTR_ATIME_NOW | fuse.FATTR_MTIME_NOW

// setattrOrphan answers a SETATTR without a handle for an unlinked node
// (not open for writing: the kernel would have passed the handle). Under
// the writeback cache the kernel sends one after every unlink(2) of a
// regular file, and on close(2) and fsync(2) of a descriptor of an
// unlinked file, to write back the times it keeps itself. An error
// answer is recorded on the inode's mapping as a write error (the
// kernel's fuse_flush_time_update), which the next close(2) or fsync(2)
// of any descriptor of that inode then returned as EIO: open O_RDONLY,
// unlink, close failed; and a new file that got the same kernel inode
// inherited it (issue 19, finding 4; see also inoReuse). Times of a file
// without a name have nowhere to go and nobody to see them, so such a
// SETATTR succeeds. The kernel ignores the attributes of that reply; they
// carry the file type, which it checks on a SETATTR of its own making.
// Anything else fails with ENOENT as before.
func (n *Node) setattrOrphan(in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if in.Valid&^uint32(orphanTimes|fuse.FATTR_LOCKOWNER) != 0 {
		return syscall.ENOENT
	}
	out.Attr.Mode = n.StableAttr().Mode
	out.Attr.Ino = n.StableAttr().Ino
	return 0
}

// orphan reports whether n is in no directory: unlinked (or an O_TMPFILE
// file, which has its own handling, or the root, which is neither).
func (n *Node) orphan() bool {
	if n.unnamedFile() != nil || n.IsRoot() {
		return false
	}
	_, p := n.Parent()
	return p == nil
}

// setattrStat applies in to the handle f or the entry e and fills out with
// the resulting attributes. changed reports whether anything was changed
// before an error.
func (rn *RootNode) setattrStat(ctx context.Context, f *file, e *entry, in *fuse.SetAttrIn, out *fuse.AttrOut) (changed bool, err error) {
	if err := rn.checkSetgid(ctx, f, e, in); err != nil {
		return false, err
	}
	if changed, err = rn.setattr(ctx, f, e, in); err != nil {
		return changed, err
	}
	var st unix.Stat_t
	stat := func() error {
		if f != nil {
			return syscallcompat.Fstat(f.cf.Fd(), &st)
		}
		return syscallcompat.Fstatat(e.dirfd, e.cName, &st)
	}
	if err := stat(); err != nil {
		return changed, err
	}
	if in.Valid&fuse.FATTR_KILL_SUIDGID != 0 && rn.asRoot {
		// An unprivileged chown or truncate (CAP_HANDLE_KILLPRIV_V2,
		// killpriv.go); only a file with set-id bits needs a chmod.
		if k, ok := killBits(ctx, &st); ok {
			if f != nil {
				err = syscallcompat.Fchmod(f.cf.Fd(), k)
			} else {
				err = syscallcompat.Fchmodat(e.dirfd, e.cName, k)
			}
			if err == nil {
				err = stat()
			}
			if err != nil {
				return true, err
			}
		}
	}
	if f != nil {
		rn.fillAttr(&st, -1, "", &out.Attr)
	} else {
		rn.fillAttr(&st, e.dirfd, e.cName, &out.Attr)
	}
	return true, nil
}

// setattr makes the changes of in other than the set-id clearing; changed
// reports whether one was made before an error.
func (rn *RootNode) setattr(ctx context.Context, f *file, e *entry, in *fuse.SetAttrIn) (changed bool, err error) {
	// Owner first: chown clears set-id bits that a chmod in the same
	// request may set.
	uid, uok := in.GetUID()
	gid, gok := in.GetGID()
	if uok || gok {
		u, g := -1, -1
		if uok {
			u = int(uid)
		}
		if gok {
			g = int(gid)
		}
		var err error
		if f != nil {
			err = syscallcompat.Fchown(f.cf.Fd(), u, g)
		} else {
			err = syscallcompat.Fchownat(e.dirfd, e.cName, u, g)
		}
		if err != nil {
			return changed, err
		}
		changed = true
	}
	if mode, ok := in.GetMode(); ok {
		var err error
		if f != nil {
			err = syscallcompat.Fchmod(f.cf.Fd(), mode&0o7777)
		} else {
			err = syscallcompat.Fchmodat(e.dirfd, e.cName, mode&0o7777)
		}
		if err != nil {
			return changed, err
		}
		changed = true
	}
	if size, ok := in.GetSize(); ok {
		var err error
		if f != nil {
			err = f.cf.Truncate(ctx, size)
		} else {
			err = rn.truncateEntry(ctx, e, size)
		}
		if err != nil {
			return changed, err
		}
		changed = true
	}
	ts := [2]unix.Timespec{{Nsec: syscallcompat.UtimeOmit}, {Nsec: syscallcompat.UtimeOmit}}
	set := false
	if in.Valid&fuse.FATTR_ATIME != 0 {
		set = true
		if in.Valid&fuse.FATTR_ATIME_NOW != 0 {
			ts[0].Nsec = syscallcompat.UtimeNow
		} else {
			ts[0] = unix.Timespec{Sec: int64(in.Atime), Nsec: int64(in.Atimensec)}
		}
	}
	if in.Valid&fuse.FATTR_MTIME != 0 {
		set = true
		if in.Valid&fuse.FATTR_MTIME_NOW != 0 {
			ts[1].Nsec = syscallcompat.UtimeNow
		} else {
			ts[1] = unix.Timespec{Sec: int64(in.Mtime), Nsec: int64(in.Mtimensec)}
		}
	}
	if !set {
		return changed, nil
	}
	if f != nil {
		err = syscallcompat.FutimesNano(f.cf.Fd(), ts)
	} else {
		err = syscallcompat.UtimesNanoAt(e.dirfd, e.cName, ts)
	}
	return changed || err == nil, err
}

// truncateEntry changes the plaintext size of a file that the kernel did
// not name by handle. It still goes through the shared contentio table, so
// it is serialized with writers on other handles of the inode.
func (rn *RootNode) truncateEntry(ctx context.Context, e *entry, size uint64) error {
	var st unix.Stat_t
	if err := syscallcompat.Fstatat(e.dirfd, e.cName, &st); err != nil {
		return err
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
	case syscall.S_IFDIR:
		return syscall.EISDIR
	default:
		return syscall.EINVAL
	}
	fd, err := rn.openBacking(e.dirfd, e.cName, unix.O_WRONLY)
	if err != nil {
		return err
	}
	cf, err := contentio.Open(rn.table, rn.ce, fd, rn.contentOptions())
	if err != nil {
		syscallcompat.Close(fd)
		return err
	}
	err = cf.Truncate(ctx, size)
	if cerr := cf.Close(); err == nil {
		err = cerr
	}
	return err
}
