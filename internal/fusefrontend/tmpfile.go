package fusefrontend

import (
	"context"
	"errors"
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/fuseutil"
	"gocryptfs/internal/syscallcompat"
)

// unnamed is the state of a node made by O_TMPFILE: it is in no directory,
// so it cannot be resolved by path; its open handles reach the backing
// file. Linking it into place (linkat through /proc/self/fd) needs one of
// them.
type unnamed struct {
	mu      sync.Mutex
	handles []*file
}

// add records an open handle of the unnamed file.
func (u *unnamed) add(f *file) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.handles = append(u.handles, f)
}

// remove forgets a handle that is being released.
func (u *unnamed) remove(f *file) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for i, h := range u.handles {
		if h == f {
			u.handles = append(u.handles[:i], u.handles[i+1:]...)
			return
		}
	}
}

// linkTo gives the backing file the name cName in dirfd, through the fd of
// an open handle (linkat with AT_EMPTY_PATH would need CAP_DAC_READ_SEARCH;
// the /proc path needs nothing). The lock keeps the handle from being
// closed meanwhile.
func (u *unnamed) linkTo(dirfd int, cName string) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.handles) == 0 {
		return syscall.ENOENT
	}
	p := syscallcompat.ProcFdPath(u.handles[0].cf.Fd())
	return syscallcompat.Retry(func() error {
		return unix.Linkat(unix.AT_FDCWD, p, dirfd, cName, unix.AT_SYMLINK_FOLLOW)
	})
}

var _ = (fs.NodeTmpfiler)((*Node)(nil))

// Tmpfile creates an unnamed regular file in directory n (open with
// O_TMPFILE): the backing file is made with O_TMPFILE in the backing
// directory, so it is removed by the backing filesystem when the last
// handle is closed unless it was linked into place.
func (n *Node) Tmpfile(ctx context.Context, flags uint32, mode uint32, out *fuse.EntryOut) (ch *fs.Inode, fh fs.FileHandle, fuseFlags uint32, errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Tmpfile", &errno)
	rn.enter("Tmpfile")
	ch, f, err := n.tmpfile(ctx, int(flags), mode, out)
	if err != nil {
		return nil, nil, 0, n.toErrno("Tmpfile", err)
	}
	fuseFlags = rn.openFlags()
	if cn, ok := ch.Operations().(*Node); ok {
		fuseFlags |= cn.trackWriter(f, true)
	}
	return ch, f, fuseFlags, 0
}

func (n *Node) tmpfile(ctx context.Context, flags int, mode uint32, out *fuse.EntryOut) (*fs.Inode, *file, error) {
	rn := n.rn
	if rn.args.ReadOnly {
		return nil, nil, syscall.EROFS
	}
	if oTmpfile == 0 {
		return nil, nil, syscall.EOPNOTSUPP
	}
	e, err := n.self()
	if err != nil {
		return nil, nil, err
	}
	defer e.close()
	dfd, err := syscallcompat.OpenDirAt(e.dirfd, e.cName)
	if err != nil {
		return nil, nil, err
	}
	defer syscallcompat.Close(dfd)
	mode, inherit := rn.modeFor(ctx, dfd, mode&0o7777)
	// Read-write whatever the caller asked for: writes are
	// read-modify-write. O_EXCL (never linkable) is enforced by the
	// kernel on our inode; the backing file stays linkable for us.
	bflags := oTmpfile | unix.O_RDWR | flags&(unix.O_SYNC|unix.O_DSYNC)
	fd := -1
	// As the caller, like create: the file is owned by the caller and
	// the kernel drops a set-group-ID bit the caller may not set.
	err = rn.asCaller(ctx, func() error {
		var err error
		if fd, err = syscallcompat.Openat(dfd, ".", bflags, mode); err != nil {
			return err
		}
		if !inherit && rn.needsChmod(mode) {
			return syscallcompat.Fchmod(fd, mode)
		}
		return nil
	})
	if err != nil {
		if fd >= 0 {
			syscallcompat.Close(fd) // unnamed: gone with the fd
		}
		if errors.Is(err, syscall.EISDIR) {
			// A backing kernel without O_TMPFILE opened the directory.
			return nil, nil, syscall.EOPNOTSUPP
		}
		return nil, nil, err
	}
	st := new(unix.Stat_t)
	f, err := rn.newFile(fd, uint32(flags), st)
	if err != nil {
		return nil, nil, err
	}
	st, err = rn.statNewHandle(f, out, st)
	if err != nil {
		return nil, nil, err
	}
	u := &unnamed{}
	u.add(f)
	f.unnamed = u
	id := fs.StableAttr{Mode: syscall.S_IFREG, Ino: rn.freshIno(st), Gen: 1}
	child := &Node{rn: rn}
	child.st.Store(&fileState{unnamed: u})
	return n.NewInode(ctx, child, id), f, nil
}
