package fusefrontend

// Locking: which locks this file takes, in which order and mode, is
// described in docs/internals.md (sections 2, 3 and 7).

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/contentio"
	"gocryptfs/internal/fuseutil"
	"gocryptfs/internal/syscallcompat"
)

// file is an open file handle: a contentio.File on a backing fd that is
// always readable (writes are read-modify-write; with the writeback cache
// the kernel also reads pages through write-only handles), plus the
// O_APPEND flag, which is emulated because the backing fd must not carry
// it. With the writeback cache appendMode stays false: the kernel places
// appends itself, and its page-cache flushes may use an O_APPEND handle
// for data that belongs anywhere in the file.
type file struct {
	cf         *contentio.File
	appendMode bool
	// direct is set for O_DIRECT opens, whose writes bypass the kernel's
	// page cache (wbmtime.go).
	direct bool
	// readOnly is set for O_RDONLY opens: the kernel writes through
	// writable handles only (also page-cache write-back), so nothing is
	// ever written through this one and its close has nothing to flush.
	readOnly bool
	// unnamed is set on the handles of an O_TMPFILE file, which forget
	// themselves there when released.
	unnamed *unnamed
	// stampCurrent is set on a read-only handle whose open found the
	// backing file as the node's cache stamp says (keepCache): its
	// release need not record the state again (an fstat saved per warm
	// open). Anything that changed the file meanwhile either recorded a
	// newer stamp on its own release or leaves the old one, which the
	// next open finds outdated and drops the cache: never a cache kept
	// wrongly, at worst one dropped that could have been kept.
	stampCurrent bool
	// writer is the node of a handle open for writing under the
	// writeback cache, lostSeen the node's count of failed write-backs
	// that this handle has reported (fullfs.go).
	writer   *Node
	lostSeen atomic.Uint64
}

// openBacking opens the backing regular file cName in dirfd for a
// plaintext open with flags. Writable opens use O_RDWR (read-modify-write
// needs to read). If that fails with EACCES, the file may be one we own
// that lacks owner-read permission (a write-only 0200 file): see
// openWriteOnly. As root the open succeeds without this.
func (rn *RootNode) openBacking(dirfd int, cName string, flags int) (int, error) {
	var st unix.Stat_t
	return rn.openBackingStat(dirfd, cName, flags, &st)
}

// openBackingStat is openBacking that also fills st with the stat of the
// opened file (see syscallcompat.OpenRegularAt).
func (rn *RootNode) openBackingStat(dirfd int, cName string, flags int, st *unix.Stat_t) (int, error) {
	bflags := unix.O_RDONLY
	if flags&unix.O_ACCMODE != unix.O_RDONLY || flags&unix.O_TRUNC != 0 {
		bflags = unix.O_RDWR
	}
	bflags |= flags & (unix.O_SYNC | unix.O_DSYNC)
	// OpenFileAt: the kernel believes this is a regular file, but the
	// backing entry may have been replaced by a FIFO (whose open would
	// block this request forever) or a device node.
	fd, err := rn.openNoatime(bflags, func(fl int) (int, error) {
		return syscallcompat.OpenRegularAt(dirfd, cName, fl, st)
	})
	if !errors.Is(err, syscall.EACCES) || bflags&unix.O_ACCMODE != unix.O_RDWR {
		return fd, err
	}
	if fd, err = rn.openWriteOnly(dirfd, cName, bflags, err); err != nil {
		return -1, err
	}
	if err := syscallcompat.Fstat(fd, st); err != nil {
		syscallcompat.Close(fd)
		return -1, err
	}
	return fd, nil
}

// openExisting opens the existing regular file cName in dirfd for a
// CREATE (without O_EXCL) whose exclusive creation found the entry there:
// it appeared after the kernel's lookup (a second mount of the CIPHERDIR, a
// sync tool, anyone writing to CIPHERDIR). The kernel checked only the
// caller's right to create in the directory, not its access to this file,
// so under -allow_other the file is first opened with the caller's
// identity and the access the caller asked for (write access also for
// O_TRUNC, as open(2) demands), which lets the backing filesystem apply
// the permission check; only that pinned inode is then reopened by the
// daemon with the access the handle needs (reads for read-modify-write).
// Never opened with the daemon's rights alone.
func (rn *RootNode) openExisting(ctx context.Context, dirfd int, cName string, flags int) (int, error) {
	cred, ok := rn.callerCred(ctx)
	if !ok || rn.daemon.same(cred) {
		// Every caller is the mounting user, or the caller is the
		// daemon itself: nothing to check on its behalf.
		return rn.openBacking(dirfd, cName, flags)
	}
	check := flags & unix.O_ACCMODE
	if flags&unix.O_TRUNC != 0 && check == unix.O_RDONLY {
		// Not O_TRUNC itself (the caller's truncation is done through
		// contentio once the handle exists), but the write access it
		// needs.
		check = unix.O_RDWR
	}
	pin := -1
	err := syscallcompat.AsCaller(cred, func() error {
		var err error
		// OpenFileAt: never a FIFO or device node swapped in, no
		// symlink followed.
		pin, err = syscallcompat.OpenFileAt(dirfd, cName, check)
		return err
	})
	if err != nil {
		return -1, err
	}
	defer syscallcompat.Close(pin)
	bflags := unix.O_RDWR | flags&(unix.O_SYNC|unix.O_DSYNC)
	return rn.openNoatime(bflags, func(fl int) (int, error) {
		// Through /proc/self/fd: exactly the pinned, checked inode.
		return syscallcompat.ReopenPathFd(pin, fl)
	})
}

// newFile wraps a backing fd in a file handle and counts it as open; st,
// unless nil, receives the fd's attributes (the one fstat of the open).
// On error fd is closed.
func (rn *RootNode) newFile(fd int, flags uint32, st *unix.Stat_t) (*file, error) {
	if st == nil {
		st = new(unix.Stat_t)
	}
	if err := syscallcompat.Fstat(fd, st); err != nil {
		syscallcompat.Close(fd)
		return nil, err
	}
	return rn.newFileStat(fd, st, flags)
}

// newFileStat is newFile for a caller that holds the stat st of fd.
func (rn *RootNode) newFileStat(fd int, st *unix.Stat_t, flags uint32) (*file, error) {
	cf, err := contentio.OpenStat(rn.table, rn.ce, fd, st, rn.contentOptions())
	if err != nil {
		syscallcompat.Close(fd)
		return nil, err
	}
	rn.openFiles.Add(1)
	return &file{cf: cf, appendMode: flags&syscall.O_APPEND != 0 && !rn.args.Writeback, direct: flags&syscallcompat.ODirect != 0,
		readOnly: flags&syscall.O_ACCMODE == syscall.O_RDONLY}, nil
}

// contentOptions are the options of every contentio.File of the mount:
// all Files of one Table must agree on SharedStorage.
func (rn *RootNode) contentOptions() contentio.Options {
	return contentio.Options{NoPrealloc: rn.args.NoPrealloc, SharedStorage: rn.args.SharedStorage, LockPolls: rn.locks.polls, Logger: rn.log}
}

func (rn *RootNode) openFlags() uint32 {
	if rn.args.KernelCache {
		return fuse.FOPEN_KEEP_CACHE
	}
	return 0
}

var _ = (fs.NodeOpener)((*Node)(nil))

// Open opens a regular file. O_TRUNC is done through contentio under the
// inode's content lock.
func (n *Node) Open(ctx context.Context, flags uint32) (fh fs.FileHandle, fuseFlags uint32, errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Open", &errno)
	rn.enter("Open")
	var st unix.Stat_t
	f, err := n.open(ctx, int(flags), &st)
	if err != nil {
		return nil, 0, n.toErrno("Open", err)
	}
	fuseFlags = rn.openFlags()
	if flags&syscall.O_TRUNC != 0 {
		if rn.args.Writeback {
			// The truncate moved the backing mtime, which the next
			// page-cache write must keep (wbmtime.go), not an older one
			// known from create or an earlier write.
			n.mtime().forget()
		}
		if err := rn.killPrivFd(ctx, f.cf.Fd(), false); err != nil {
			rn.releaseFile(f)
			return nil, 0, n.toErrno("Open", err)
		}
		// st predates the truncation, which changed the content: the
		// page cache is never kept (the truncation changed ctime, so the
		// stamp would not have matched either).
	}
	if f.readOnly && !rn.args.Writeback && !rn.args.ForwardLocks {
		// No FLUSH round trip for the close of a handle that has
		// nothing to flush (see Flush). The kernel ignores the flag
		// under the writeback cache, whose FLUSH also writes the
		// inode's dirty pages back. Forwarded locks need every FLUSH:
		// it releases the closing process's locks (locks.go).
		fuseFlags |= fuse.FOPEN_NOFLUSH
	}
	if flags&syscall.O_TRUNC == 0 && n.keepCache(&st, flags&syscall.O_ACCMODE != syscall.O_WRONLY) {
		fuseFlags |= fuse.FOPEN_KEEP_CACHE
		f.stampCurrent = flags&syscall.O_ACCMODE == syscall.O_RDONLY
	}
	fuseFlags |= n.trackWriter(f, false)
	return f, fuseFlags, 0
}

// open opens n's backing file for a plaintext open with flags and fills st
// with its stat taken at the open. The regular backing name is tried
// first (withEntry): a file that exists under it opens in four system
// calls (see syscallcompat.OpenRegularAt).
func (n *Node) open(ctx context.Context, flags int, st *unix.Stat_t) (*file, error) {
	rn := n.rn
	if rn.args.ReadOnly && (flags&unix.O_ACCMODE != unix.O_RDONLY || flags&unix.O_TRUNC != 0) {
		return nil, syscall.EROFS
	}
	fd := -1
	err := rn.withEntry(n.relPath(), func(e *entry) error {
		var err error
		fd, err = rn.openBackingStat(e.dirfd, e.cName, flags, st)
		return err
	})
	if err != nil {
		return nil, err
	}
	f, err := rn.newFileStat(fd, st, uint32(flags))
	if err != nil {
		return nil, err
	}
	if flags&unix.O_TRUNC != 0 {
		if err := f.cf.Truncate(ctx, 0); err != nil {
			rn.releaseFile(f)
			return nil, err
		}
	}
	return f, nil
}

// releaseFile closes a handle and uncounts it.
func (rn *RootNode) releaseFile(f *file) error {
	if f.unnamed != nil {
		f.unnamed.remove(f)
	}
	rn.openFiles.Add(-1)
	return f.cf.Close()
}

// statNewHandle fills out with the attributes of a just opened handle:
// st if it holds them (taken by newFile, nothing changed since), else a
// fresh fstat; on error the handle is released.
func (rn *RootNode) statNewHandle(f *file, out *fuse.EntryOut, st *unix.Stat_t) (*unix.Stat_t, error) {
	if st == nil {
		st = new(unix.Stat_t)
		if err := syscallcompat.Fstat(f.cf.Fd(), st); err != nil {
			rn.releaseFile(f)
			return nil, err
		}
	}
	rn.fillAttr(st, -1, "", &out.Attr)
	return st, nil
}

var _ = (fs.NodeCreater)((*Node)(nil))

// Create creates and opens a regular file.
func (n *Node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (ch *fs.Inode, fh fs.FileHandle, fuseFlags uint32, errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Create", &errno)
	rn.enter("Create")
	ch, f, err := n.create(ctx, name, int(flags), mode, out)
	if err != nil {
		return nil, nil, 0, n.toErrno("Create", err)
	}
	fuseFlags = rn.openFlags()
	if cn, ok := ch.Operations().(*Node); ok {
		fuseFlags |= cn.trackWriter(f, true)
	}
	return ch, f, fuseFlags, 0
}

func (n *Node) create(ctx context.Context, name string, flags int, mode uint32, out *fuse.EntryOut) (*fs.Inode, *file, error) {
	rn := n.rn
	e, err := n.prepareCreate(name)
	if err != nil {
		return nil, nil, err
	}
	defer e.close()
	mode, inherit := rn.modeFor(ctx, e.dirfd, mode&0o7777)
	// Always create exclusively first: only then is it certain that the
	// entry is new (ours to chmod and, on failure, to drop the long-name
	// file of), whatever runs concurrently. An existing entry is opened
	// like any other open, which honours O_TRUNC and never opens a FIFO
	// or device node that was swapped in.
	bflags := unix.O_RDWR | unix.O_CREAT | unix.O_EXCL | flags&(unix.O_SYNC|unix.O_DSYNC)
	existed := false
	fd := -1
	var undo func()
	var openErr error
	err = rn.asCaller(ctx, func() error {
		if err := rn.inject("create-as-caller"); err != nil {
			return err
		}
		var err error
		if undo, err = rn.writeLongName(e); err != nil {
			return err
		}
		fd, openErr = syscallcompat.Openat(e.dirfd, e.cName, bflags, mode)
		if openErr != nil {
			return openErr
		}
		// As the caller, so that the kernel drops a set-group-ID bit
		// that the caller may not set. Not after inheriting a default
		// ACL, from which the backing filesystem derived the mode.
		if !inherit && rn.needsChmod(mode) {
			return syscallcompat.Fchmod(fd, mode)
		}
		return nil
	})
	if err != nil && fd >= 0 {
		// Only the chmod failed: the file is new and ours to remove.
		syscallcompat.Close(fd)
		fd = -1
		if err2 := syscallcompat.Unlinkat(e.dirfd, e.cName, 0); err2 != nil {
			rn.log.Warn("create: could not remove the new file after a failure", "name", e.cName, "err", err2)
		}
	}
	if errors.Is(openErr, syscall.EEXIST) && flags&unix.O_EXCL == 0 {
		existed = true
		fd, err = rn.openExisting(ctx, e.dirfd, e.cName, flags)
	}
	if err != nil {
		if !existed && undo != nil {
			undo()
		}
		return nil, nil, err
	}
	// One fstat serves the open and the reply, unless O_TRUNC changed the
	// file in between.
	st := new(unix.Stat_t)
	f, err := rn.newFile(fd, uint32(flags), st)
	if err != nil {
		return nil, nil, err
	}
	if existed && flags&unix.O_TRUNC != 0 {
		err := f.cf.Truncate(ctx, 0)
		if err == nil {
			err = rn.killPrivFd(ctx, f.cf.Fd(), false)
		}
		if err != nil {
			rn.releaseFile(f)
			return nil, nil, err
		}
		st = nil
	}
	st, err = rn.statNewHandle(f, out, st)
	if err != nil {
		return nil, nil, err
	}
	rn.touchAltIVs(e.dirfd)
	var ch *fs.Inode
	if existed {
		ch = n.newChild(ctx, st)
	} else {
		ch = n.newFreshChild(ctx, st)
	}
	if cn, ok := ch.Operations().(*Node); ok && rn.args.Writeback {
		// The stat just taken saves the first write its own (wbmtime.go).
		cn.mtime().seed(st.Mtim)
	}
	return ch, f, nil
}

var _ = (fs.NodeReader)((*Node)(nil))

// Read decrypts plaintext from an open file.
func (n *Node) Read(ctx context.Context, fh fs.FileHandle, dest []byte, off int64) (res fuse.ReadResult, errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Read", &errno)
	rn.enter("Read")
	f, ok := fh.(*file)
	if !ok {
		return nil, syscall.EBADF
	}
	nr, err := f.cf.ReadAtContext(ctx, dest, off)
	if err != nil && err != io.EOF {
		return nil, n.toErrno("Read", err)
	}
	rn.touchAtime(f.cf.Fd())
	return rn.readResults.Get(dest[:nr]), 0
}

var _ = (fs.NodeWriter)((*Node)(nil))

// Write encrypts data into an open file; on an O_APPEND handle data goes
// to the current end of file whatever offset the kernel computed (another
// writer may have extended the file since the kernel's cached size).
func (n *Node) Write(ctx context.Context, fh fs.FileHandle, data []byte, off int64) (written uint32, errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Write", &errno)
	rn.enter("Write")
	f, ok := fh.(*file)
	if !ok {
		return 0, syscall.EBADF
	}
	if rn.args.ReadOnly {
		return 0, syscall.EROFS
	}
	if err := rn.killPrivFd(ctx, f.cf.Fd(), false); err != nil {
		return 0, n.toErrno("Write", err)
	}
	if rn.args.Writeback && !f.direct {
		// A write-back from the page cache: keep the kernel's mtime.
		mt := n.mtime()
		ts, err := mt.hold(f.cf.Fd())
		if err != nil {
			return 0, n.toErrno("Write", err)
		}
		nw, err := f.cf.WriteAtContext(ctx, data, off)
		rn.space.wrote(nw)
		if err != nil {
			n.lostWrite(ctx, f, off, len(data), err)
		}
		err = errors.Join(err, mt.done(f.cf.Fd(), ts, nw > 0))
		if err != nil {
			return uint32(nw), n.toErrno("Write", err)
		}
		return uint32(nw), 0
	}
	if rn.args.Writeback {
		defer n.mtime().forget()
	}
	var nw int
	var err error
	if f.appendMode {
		_, nw, err = f.cf.Append(ctx, data)
	} else {
		nw, err = f.cf.WriteAtContext(ctx, data, off)
	}
	rn.space.wrote(nw)
	if err != nil {
		return uint32(nw), n.toErrno("Write", err)
	}
	return uint32(nw), 0
}

var _ = (fs.NodeFsyncer)((*Node)(nil))

// Fsync flushes the backing file (fdatasync if bit 0 of flags is set).
func (n *Node) Fsync(ctx context.Context, fh fs.FileHandle, flags uint32) (errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Fsync", &errno)
	rn.enter("Fsync")
	if f, ok := fh.(*file); ok {
		return n.toErrno("Fsync", f.cf.Fsync(flags&1 != 0))
	}
	// A file without a handle (directories are synced through their
	// open handle): sync the backing entry through a fresh read-only fd.
	return n.toErrno("Fsync", n.syncBacking(flags&1 != 0))
}

func (n *Node) syncBacking(datasync bool) error {
	e, err := n.self()
	if err != nil {
		return err
	}
	defer e.close()
	// Never a plain open: the entry may have become a FIFO.
	fd, err := syscallcompat.OpenDirAt(e.dirfd, e.cName)
	if errors.Is(err, syscall.ENOTDIR) {
		fd, err = syscallcompat.OpenFileAt(e.dirfd, e.cName, unix.O_RDONLY)
	}
	if err != nil {
		return err
	}
	defer syscallcompat.Close(fd)
	if datasync {
		return syscallcompat.Fdatasync(fd)
	}
	return syscallcompat.Retry(func() error { return unix.Fsync(fd) })
}

var _ = (fs.NodeReleaser)((*Node)(nil))

// Release closes a file handle.
func (n *Node) Release(ctx context.Context, fh fs.FileHandle) (errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Release", &errno)
	rn.enter("Release")
	f, ok := fh.(*file)
	if !ok {
		return 0
	}
	if !f.stampCurrent {
		n.rememberStamp(f.cf.Fd())
	}
	if rn.args.ForwardLocks {
		// After the fd is closed: its flock locks are gone then.
		defer rn.locks.handleReleased(n.StableAttr().Ino, f)
	}
	rn.untrackWriter(f)
	return n.toErrno("Release", rn.releaseFile(f))
}

var _ = (fs.NodeAllocater)((*Node)(nil))

// Allocate implements fallocate for mode 0 and FALLOC_FL_KEEP_SIZE.
func (n *Node) Allocate(ctx context.Context, fh fs.FileHandle, off uint64, size uint64, mode uint32) (errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Allocate", &errno)
	rn.enter("Allocate")
	if rn.args.Writeback {
		defer n.mtime().forget() // the backing mtime is now the one to keep
	}
	f, ok := fh.(*file)
	if !ok {
		return syscall.EBADF
	}
	if rn.args.ReadOnly {
		return syscall.EROFS
	}
	return n.toErrno("Allocate", f.cf.Allocate(ctx, off, size, mode))
}

var _ = (fs.NodeLseeker)((*Node)(nil))

// Lseek implements SEEK_DATA and SEEK_HOLE (the kernel handles the other
// whence values itself).
func (n *Node) Lseek(ctx context.Context, fh fs.FileHandle, off uint64, whence uint32) (res uint64, errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Lseek", &errno)
	rn.enter("Lseek")
	f, ok := fh.(*file)
	if !ok {
		return 0, syscall.EBADF
	}
	if rn.args.Writeback {
		// The kernel does not write dirty pages back before asking (and
		// holds no lock against it), so data that is only in the page
		// cache would be reported as a hole. Invalidating the range
		// writes dirty pages back first (launder) and then drops them.
		if errno := n.NotifyContent(int64(off), 0); errno != 0 && errno != syscall.ENOENT {
			return 0, errno
		}
	}
	var err error
	switch whence {
	case unix.SEEK_DATA:
		res, err = f.cf.SeekData(ctx, off)
	case unix.SEEK_HOLE:
		res, err = f.cf.SeekHole(ctx, off)
	default:
		return 0, syscall.EINVAL
	}
	return res, n.toErrno("Lseek", err)
}
