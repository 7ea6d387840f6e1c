package fusefrontend

import (
	"context"
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
func (n *Node) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) (errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Setattr", &errno)
	rn.enter("Setattr")
	if rn.args.ReadOnly {
		return syscall.EROFS
	}
	f, _ := fh.(*file)
	var e *entry
	if f == nil {
		if fd := rn.openDirs.dupFd(n); fd >= 0 {
			// An open directory: act on the directory that was
			// opened, which may no longer have a path.
			e = &entry{dirfd: fd, cName: "."}
		} else {
			var err error
			if e, err = n.self(); err != nil {
				return n.toErrno("Setattr", err)
			}
		}
		defer e.close()
	}
	if err := rn.checkSetgid(ctx, f, e, in); err != nil {
		return n.toErrno("Setattr", err)
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
	if err := rn.setattr(ctx, f, e, in); err != nil {
		return n.toErrno("Setattr", err)
	}
	var st unix.Stat_t
	if f != nil {
		if err := syscallcompat.Fstat(f.cf.Fd(), &st); err != nil {
			return n.toErrno("Setattr", err)
		}
		rn.fillAttr(&st, -1, "", &out.Attr)
		return 0
	}
	if err := syscallcompat.Fstatat(e.dirfd, e.cName, &st); err != nil {
		return n.toErrno("Setattr", err)
	}
	rn.fillAttr(&st, e.dirfd, e.cName, &out.Attr)
	return 0
}

func (rn *RootNode) setattr(ctx context.Context, f *file, e *entry, in *fuse.SetAttrIn) error {
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
			return err
		}
	}
	if mode, ok := in.GetMode(); ok {
		var err error
		if f != nil {
			err = syscallcompat.Fchmod(f.cf.Fd(), mode&0o7777)
		} else {
			err = syscallcompat.Fchmodat(e.dirfd, e.cName, mode&0o7777)
		}
		if err != nil {
			return err
		}
	}
	if size, ok := in.GetSize(); ok {
		var err error
		if f != nil {
			err = f.cf.Truncate(size)
		} else {
			err = rn.truncateEntry(e, size)
		}
		if err != nil {
			return err
		}
	}
	if in.Valid&fuse.FATTR_KILL_SUIDGID != 0 {
		// An unprivileged truncate (CAP_HANDLE_KILLPRIV_V2, killpriv.go).
		var err error
		if f != nil {
			err = rn.killPrivFd(ctx, f.cf.Fd(), true)
		} else {
			err = rn.killPrivEntry(ctx, e)
		}
		if err != nil {
			return err
		}
	}
	ts := [2]unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Nsec: unix.UTIME_OMIT}}
	set := false
	if in.Valid&fuse.FATTR_ATIME != 0 {
		set = true
		if in.Valid&fuse.FATTR_ATIME_NOW != 0 {
			ts[0].Nsec = unix.UTIME_NOW
		} else {
			ts[0] = unix.Timespec{Sec: int64(in.Atime), Nsec: int64(in.Atimensec)}
		}
	}
	if in.Valid&fuse.FATTR_MTIME != 0 {
		set = true
		if in.Valid&fuse.FATTR_MTIME_NOW != 0 {
			ts[1].Nsec = unix.UTIME_NOW
		} else {
			ts[1] = unix.Timespec{Sec: int64(in.Mtime), Nsec: int64(in.Mtimensec)}
		}
	}
	if set {
		if f != nil {
			return syscallcompat.FutimesNano(f.cf.Fd(), ts)
		}
		return syscallcompat.UtimesNanoAt(e.dirfd, e.cName, ts)
	}
	return nil
}

// truncateEntry changes the plaintext size of a file that the kernel did
// not name by handle. It still goes through the shared contentio table, so
// it is serialized with writers on other handles of the inode.
func (rn *RootNode) truncateEntry(e *entry, size uint64) error {
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
	cf, err := contentio.Open(rn.table, rn.ce, fd, contentio.Options{NoPrealloc: rn.args.NoPrealloc, Logger: rn.log})
	if err != nil {
		syscallcompat.Close(fd)
		return err
	}
	err = cf.Truncate(size)
	if cerr := cf.Close(); err == nil {
		err = cerr
	}
	return err
}
