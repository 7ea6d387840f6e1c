package fusefrontend

import (
	"context"
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/fuseutil"
	"gocryptfs/internal/syscallcompat"
)

// dirHandle is an open directory. Besides the listing it holds an fd of
// the backing directory, so that fstat keeps answering for the directory
// that was opened even after it was removed or another directory was
// renamed over it (its node then has no path any more). go-fuse hands the
// first open handle of a node to Getattr, also for fstat on a directory,
// for which the kernel sends no handle itself.
type dirHandle struct {
	n  *Node
	fd int // backing directory, O_RDONLY

	mu sync.Mutex
	ds fs.DirStream // created on the first read, again on rewinddir
}

var _ = (fs.NodeOpendirHandler)((*Node)(nil))

// OpendirHandle opens directory n.
func (n *Node) OpendirHandle(ctx context.Context, flags uint32) (fh fs.FileHandle, fuseFlags uint32, errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Opendir", &errno)
	rn.enter("Opendir")
	e, err := n.self()
	if err != nil {
		return nil, 0, n.toErrno("Opendir", err)
	}
	defer e.close()
	fd, err := syscallcompat.OpenDirAt(e.dirfd, e.cName)
	if err != nil {
		return nil, 0, n.toErrno("Opendir", err)
	}
	return &dirHandle{n: n, fd: fd}, 0, 0
}

var (
	_ = (fs.FileReaddirenter)((*dirHandle)(nil))
	_ = (fs.FileSeekdirer)((*dirHandle)(nil))
	_ = (fs.FileReleasedirer)((*dirHandle)(nil))
	_ = (fs.FileFsyncdirer)((*dirHandle)(nil))
)

// stream returns the listing, reading the directory on first use.
func (d *dirHandle) stream(ctx context.Context) (fs.DirStream, syscall.Errno) {
	if d.ds == nil {
		ds, errno := d.n.Readdir(ctx)
		if errno != 0 {
			return nil, errno
		}
		d.ds = ds
	}
	return d.ds, 0
}

// Readdirent returns the next entry, or nil at the end.
func (d *dirHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	d.mu.Lock()
	defer d.mu.Unlock()
	ds, errno := d.stream(ctx)
	if errno != 0 || !ds.HasNext() {
		return nil, errno
	}
	e, errno := ds.Next()
	return &e, errno
}

// Seekdir repositions the listing; offset 0 (rewinddir) reads the
// directory afresh, as getdents does on a local filesystem.
func (d *dirHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	d.mu.Lock()
	defer d.mu.Unlock()
	if off == 0 && d.ds != nil {
		d.ds.Close()
		d.ds = nil
	}
	ds, errno := d.stream(ctx)
	if errno != 0 {
		return errno
	}
	if sd, ok := ds.(fs.FileSeekdirer); ok {
		return sd.Seekdir(ctx, off)
	}
	return syscall.ENOTSUP
}

// Releasedir closes the listing and the backing fd.
func (d *dirHandle) Releasedir(ctx context.Context, releaseFlags uint32) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ds != nil {
		d.ds.Close()
		d.ds = nil
	}
	syscallcompat.Close(d.fd)
}

// Fsyncdir syncs the backing directory (fdatasync if bit 0 of flags is set).
func (d *dirHandle) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	errno, _ := fuseutil.ToErrno(syscallcompat.Retry(func() error {
		if flags&1 != 0 {
			return unix.Fdatasync(d.fd)
		}
		return unix.Fsync(d.fd)
	}))
	return errno
}
