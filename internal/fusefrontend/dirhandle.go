package fusefrontend

import (
	"context"
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/fuseutil"
	"gocryptfs/internal/syscallcompat"
)

// An open directory (plusDir) holds an fd of the backing directory, so
// that fstat, fchmod and fsync keep acting on the directory that was
// opened even after it was removed or another directory was renamed over
// it (its node then has no path any more). go-fuse hands the first open
// handle of a node to Getattr, also for fstat on a directory, for which
// the kernel sends no handle itself; Setattr finds it in openDirs.

var _ = (fs.NodeOpendirHandler)((*Node)(nil))

// OpendirHandle opens directory n; the listing is read on the first
// READDIR(PLUS).
func (n *Node) OpendirHandle(ctx context.Context, flags uint32) (fh fs.FileHandle, fuseFlags uint32, errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Opendir", &errno)
	rn.enter("Opendir")
	// The regular name first: the conflict-name fallbacks of child
	// cost a stat per OPENDIR.
	fd := -1
	err := rn.withEntry(n.relPath(), func(e *entry) error {
		var err error
		// Listings read this fd (readDirFd): O_NOATIME under the
		// noatime policy.
		fd, err = rn.openNoatime(unix.O_RDONLY|unix.O_DIRECTORY, func(fl int) (int, error) {
			return syscallcompat.Openat(e.dirfd, e.cName, fl, 0)
		})
		return err
	})
	if err != nil {
		return nil, 0, n.toErrno("Opendir", err)
	}
	d := &plusDir{n: n, fd: fd}
	rn.openDirs.add(n, d)
	return d, 0, 0
}

// openDirs records the open directory handles of each node, for the
// requests that the kernel sends without a handle (fchmod, fchown,
// futimens on a directory).
type openDirs struct {
	mu sync.Mutex
	m  map[*Node][]*plusDir
}

func (o *openDirs) add(n *Node, d *plusDir) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = make(map[*Node][]*plusDir)
	}
	o.m[n] = append(o.m[n], d)
}

func (o *openDirs) remove(n *Node, d *plusDir) {
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

var _ = (fs.FileFsyncdirer)((*plusDir)(nil))

// Fsyncdir syncs the backing directory (fdatasync if bit 0 of flags is set).
func (d *plusDir) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	errno, _ := fuseutil.ToErrno(syscallcompat.Retry(func() error {
		if flags&1 != 0 {
			return syscallcompat.Fdatasync(d.fd)
		}
		return unix.Fsync(d.fd)
	}))
	return errno
}
