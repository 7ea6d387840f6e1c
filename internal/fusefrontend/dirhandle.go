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
		return nil, 0, n.toErrno("Opendir", n.staleIfOrphan(err))
	}
	defer e.close()
	fd, err := syscallcompat.OpenDirAt(e.dirfd, e.cName)
	if err != nil {
		return nil, 0, n.toErrno("Opendir", err)
	}
	d := &dirHandle{n: n, fd: fd}
	rn.openDirs.add(n, d)
	return d, 0, 0
}

// openDirs records the open directory handles of each node, for the
// requests that the kernel sends without a handle (fchmod, fchown,
// futimens on a directory).
type openDirs struct {
	mu sync.Mutex
	m  map[*Node][]*dirHandle
}

func (o *openDirs) add(n *Node, d *dirHandle) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = make(map[*Node][]*dirHandle)
	}
	o.m[n] = append(o.m[n], d)
}

func (o *openDirs) remove(n *Node, d *dirHandle) {
	o.mu.Lock()
	defer o.mu.Unlock()
	l := o.m[n]
	for i, h := range l {
		if h == d {
			l = append(l[:i], l[i+1:]...)
			break
		}
	}
	if len(l) == 0 {
		delete(o.m, n)
	} else {
		o.m[n] = l
	}
}

// dupFd returns a duplicate of the backing fd of one of n's open
// directory handles, or -1 if there is none.
func (o *openDirs) dupFd(n *Node) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	l := o.m[n]
	if len(l) == 0 {
		return -1
	}
	fd, err := syscallcompat.Dup(l[0].fd)
	if err != nil {
		return -1
	}
	return fd
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
	d.n.rn.openDirs.remove(d.n, d)
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
