package fusefrontend

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/fuseutil"
	"gocryptfs/internal/inomap"
	"gocryptfs/internal/syscallcompat"
)

// Node is any file, directory or other entry of the plaintext view. It keeps
// no state besides the mount: the backing entry is found again from the
// node's current path in go-fuse's tree for every operation, so renames
// need no bookkeeping here.
//
// A mount may hold hundreds of thousands of Nodes (one per entry the
// kernel has looked up), so Node is kept to go-fuse's Inode plus two
// pointers: 144 bytes, a size class of its own. State that only files
// being opened or written need lives in fileState, allocated on first use
// (TestInodeFootprint bounds the heap per looked-up inode).
type Node struct {
	fs.Inode
	rn *RootNode
	// st is nil until the node is opened or written as a regular file
	// (see state).
	st atomic.Pointer[fileState]
}

// fileState is the part of a Node that only regular files that have been
// opened (or made with O_TMPFILE) need.
type fileState struct {
	// stamp is the backing file's state at the last release of a handle
	// (keepcache.go); nil when unknown.
	stamp atomic.Pointer[cacheStamp]
	// unnamed is set for a file made with O_TMPFILE (see tmpfile.go);
	// it does not change after the node is made.
	unnamed *unnamed
	// mtime keeps the backing mtime at the kernel's under the writeback
	// cache (wbmtime.go).
	mtime mtimeKeeper
	// lost counts the page-cache write-backs that failed, lostErr is
	// the error of the last; dropping is set while a goroutine is about
	// to drop the page cache after one (fullfs.go).
	lost     atomic.Uint64
	lostErr  atomic.Int32
	dropping atomic.Bool
}

// state returns n's fileState, allocating it on first use. Concurrent
// first uses agree on one.
func (n *Node) state() *fileState {
	if s := n.st.Load(); s != nil {
		return s
	}
	n.st.CompareAndSwap(nil, &fileState{})
	return n.st.Load()
}

// unnamedFile returns the O_TMPFILE state of n, nil for a named file.
func (n *Node) unnamedFile() *unnamed {
	if s := n.st.Load(); s != nil {
		return s.unnamed
	}
	return nil
}

// mtime returns n's keeper of the backing mtime (wbmtime.go).
func (n *Node) mtime() *mtimeKeeper {
	return &n.state().mtime
}

// relPath returns the plaintext path of n relative to the root. A node that
// has been unlinked gets a placeholder path that resolves to nothing.
func (n *Node) relPath() string {
	return n.Path(n.rn.EmbeddedInode())
}

// self resolves n to its backing entry.
func (n *Node) self() (*entry, error) {
	return n.rn.resolve(n.relPath())
}

// shownIno maps a backing stat to the inode number the mount shows.
func (rn *RootNode) shownIno(st *unix.Stat_t) uint64 {
	return rn.reuse.shown(rn.inos.Translate(inomap.QIno{Dev: uint64(st.Dev), Ino: st.Ino}))
}

// fillAttr converts a backing stat of the entry cName in dirfd into
// plaintext attributes: content size for regular files, decrypted target
// length for symlinks, mapped inode number, -force_owner.
func (rn *RootNode) fillAttr(st *unix.Stat_t, dirfd int, cName string, out *fuse.Attr) {
	fuseutil.AttrFromStat(st, out)
	out.Ino = rn.shownIno(st)
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		size, problem := rn.ce.CipherSizeToPlainSizeCheck(uint64(st.Size))
		if problem != 0 {
			if rn.firstWarn(sizeWarnKey(out.Ino)) {
				rn.log.Warn("unusual ciphertext size", "ino", st.Ino, "size", st.Size, "problem", problem.String())
			}
		}
		out.Size = size
	case syscall.S_IFLNK:
		out.Size = rn.symlinkSize(dirfd, cName, uint64(st.Size))
	}
	fuseutil.ApplyOwner(out, rn.args.ForceOwner)
}

// symlinkSize returns the decrypted length of the symlink cName in dirfd.
// stat must not fail because a target is corrupt, so that case reports the
// stored length (readlink then fails with EIO).
func (rn *RootNode) symlinkSize(dirfd int, cName string, stored uint64) uint64 {
	if rn.nt.PlaintextNames() {
		return stored
	}
	target, err := syscallcompat.Readlinkat(dirfd, cName)
	if err != nil {
		return stored
	}
	plain, err := rn.nt.DecryptSymlinkTarget(target)
	if err != nil {
		return stored
	}
	return uint64(len(plain))
}

// newChild creates (or finds) the go-fuse inode for an existing backing
// entry.
func (n *Node) newChild(ctx context.Context, st *unix.Stat_t) *fs.Inode {
	id := fs.StableAttr{Mode: uint32(st.Mode & syscall.S_IFMT), Ino: n.rn.shownIno(st), Gen: 1}
	return n.NewInode(ctx, &Node{rn: n.rn}, id)
}

// newFreshChild is newChild for an entry the mount just created with a
// new inode, whose inode number the kernel may still know from a removed
// entry (see inoReuse).
func (n *Node) newFreshChild(ctx context.Context, st *unix.Stat_t) *fs.Inode {
	id := fs.StableAttr{Mode: uint32(st.Mode & syscall.S_IFMT), Ino: n.rn.freshIno(st), Gen: 1}
	return n.NewInode(ctx, &Node{rn: n.rn}, id)
}

// freshIno is shownIno for an entry just created with a new inode.
func (rn *RootNode) freshIno(st *unix.Stat_t) uint64 {
	return rn.reuse.fresh(rn.inos.Translate(inomap.QIno{Dev: uint64(st.Dev), Ino: st.Ino}), rn.inos)
}

// reserved reports whether plaintext name may never be looked up or
// created in directory dir: gocryptfs.conf in the root with PlaintextNames.
func (rn *RootNode) reserved(dir, name string) bool {
	return rn.nt.IsReservedName(name, dir == "")
}

var _ = (fs.NodeLookuper)((*Node)(nil))

// Lookup finds the child name of directory n.
func (n *Node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (ch *fs.Inode, errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Lookup", &errno)
	rn.enter("Lookup")
	dir := n.relPath()
	if rn.reserved(dir, name) {
		return nil, syscall.ENOENT
	}
	e, st, err := rn.lookupEntry(dir, name)
	if err != nil {
		return nil, n.toErrno("Lookup", err)
	}
	defer e.close()
	rn.fillAttr(st, e.dirfd, e.cName, &out.Attr)
	return n.newChild(ctx, st), 0
}

// lookupEntry resolves and stats dir/name.
func (rn *RootNode) lookupEntry(dir, name string) (*entry, *unix.Stat_t, error) {
	var st unix.Stat_t
	e, err := rn.child(dir, name)
	if err != nil {
		return nil, nil, err
	}
	if err := e.stat(&st); err != nil {
		e.close()
		return nil, nil, err
	}
	return e, &st, nil
}

var _ = (fs.NodeGetattrer)((*Node)(nil))

// Getattr stats n, through its open file or directory handle when there is
// one (which also works after the entry was unlinked or replaced).
func (n *Node) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) (errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Getattr", &errno)
	rn.enter("Getattr")
	fd := -1
	switch h := fh.(type) {
	case *file:
		fd = h.cf.Fd()
		if h.writer != nil && rn.space.isLow() {
			if errno := n.flushBeforeWrite(h); errno != 0 {
				return errno
			}
		}
	case *plusDir:
		fd = h.fd
	}
	if fd >= 0 {
		var st unix.Stat_t
		if err := syscallcompat.Fstat(fd, &st); err != nil {
			return n.toErrno("Getattr", err)
		}
		rn.fillAttr(&st, -1, "", &out.Attr)
		return 0
	}
	return n.toErrno("Getattr", rn.statPath(n.relPath(), &out.Attr))
}

// statPath fills out with the attributes of the entry at plaintext path p.
func (rn *RootNode) statPath(p string, out *fuse.Attr) error {
	e, err := rn.resolve(p)
	if err != nil {
		return err
	}
	defer e.close()
	var st unix.Stat_t
	if err := e.stat(&st); err != nil {
		return err
	}
	rn.fillAttr(&st, e.dirfd, e.cName, out)
	return nil
}

var _ = (fs.NodeStatfser)((*Node)(nil))

// Statfs passes the backing filesystem's statistics through.
func (n *Node) Statfs(ctx context.Context, out *fuse.StatfsOut) (errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Statfs", &errno)
	rn.enter("Statfs")
	var st unix.Statfs_t
	if err := syscallcompat.Fstatfs(rn.rootFd, &st); err != nil {
		return n.toErrno("Statfs", err)
	}
	fuseutil.StatfsFromUnix(&st, out)
	return 0
}

// firstWarn reports whether a warning identified by key is logged now: the
// first time the key is seen. The set of keys is bounded so that a huge
// number of bad entries cannot exhaust memory; past the bound warnings are
// simply repeated.
func (rn *RootNode) firstWarn(key string) bool {
	return !rn.warned.seen(key)
}

func sizeWarnKey(ino uint64) string {
	return "size:" + uitoa(ino)
}

func uitoa(v uint64) string { return strconv.FormatUint(v, 10) }

// warnLog remembers which warnings (bad names, damaged files) were
// already logged, so that each is logged once per mount.
type warnLog struct {
	mu   sync.Mutex
	keys map[string]struct{}
}

const maxWarnKeys = 100000

func (b *warnLog) init() { b.keys = make(map[string]struct{}) }

// seen records key and reports whether it was recorded before.
func (b *warnLog) seen(key string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.keys[key]; ok {
		return true
	}
	if len(b.keys) < maxWarnKeys {
		b.keys[key] = struct{}{}
	}
	return false
}
