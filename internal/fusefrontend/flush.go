package fusefrontend

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/fuseutil"
	"gocryptfs/internal/mountinfo"
	"gocryptfs/internal/syscallcompat"
)

// FLUSH is sent on every close(2) of a descriptor, one round trip per
// closed file (a tenth of the requests of an untar). On the local
// filesystems of mountinfo.CloseIsNoop, closing a backing descriptor does
// nothing but release it, so the frontend answers the first FLUSH with
// ENOSYS and the kernel stops sending them for the whole mount
// (fuse_flush sets fc->no_flush). What close(2) must still do happens
// without FLUSH:
//   - Dirty pages: the kernel's fuse_flush writes the inode back
//     (write_inode_now: the WRITEs and the SETATTR with the kernel's
//     mtime) and waits for them before it looks at no_flush, so written
//     data is in the backing file when close returns, and a write error
//     is still reported by close.
//   - Locks: the kernel keeps fcntl and flock locks itself and releases
//     them on close; only with -sharedstorage are they forwarded, and
//     there FLUSH releases the closing process's locks (locks.go).
//
// A write-back that failed before the close is reported the same way
// (filemap_check_errors, once per file); see fullfs.go for full disks.
//
// FLUSH stays on with -sharedstorage (Args.ForwardLocks) and on every other backing
// filesystem: a network filesystem (NFS, SMB, FUSE) uses the close of a
// descriptor as its close-to-open flush point and reports write errors
// there.
//
// Flush takes no lock of the write path (docs/internals.md, section 9).

// flushNeeded decides whether FLUSH requests are answered (see above) for
// the CIPHERDIR open as rootFd. A filesystem mounted somewhere below
// CIPHERDIR could be a network filesystem, so a CIPHERDIR with mounts
// below it keeps FLUSH too, as does one whose mount table cannot be read.
// (A mount made below CIPHERDIR after mounting is not seen.)
func flushNeeded(args Args, rootFd int) bool {
	if args.SharedStorage || args.ForwardLocks {
		return true
	}
	var sfs unix.Statfs_t
	if err := syscallcompat.Retry(func() error { return unix.Fstatfs(rootFd, &sfs) }); err != nil {
		return true
	}
	if !mountinfo.CloseIsNoop(int64(sfs.Type)) {
		return true
	}
	return hasMountsBelow(args.CipherDir)
}

// hasMountsBelow reports whether a filesystem is mounted on a directory
// below dir, or whether that cannot be told.
func hasMountsBelow(dir string) bool {
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return true
	}
	mounts, err := mountinfo.Read()
	if err != nil {
		return true
	}
	prefix := strings.TrimSuffix(abs, "/") + "/"
	for _, m := range mounts {
		if strings.HasPrefix(m.MountPoint, prefix) {
			return true
		}
	}
	return false
}

var _ = (fs.NodeFlusher)((*Node)(nil))

// Flush is called on every close(2) of a descriptor while the kernel
// sends FLUSH (see above). Closing a duplicate of the backing fd gives a
// backing network filesystem its close-to-open flush point without giving
// up the handle.
func (n *Node) Flush(ctx context.Context, fh fs.FileHandle) (errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Flush", &errno)
	rn.enter("Flush")
	if !rn.flush {
		return syscall.ENOSYS
	}
	f, ok := fh.(*file)
	if !ok || f.readOnly {
		// A read-only handle wrote nothing, so there is nothing to flush
		// (NFS, for one, flushes only writable files on close); its FLUSH
		// only comes under the writeback cache, which ignores
		// FOPEN_NOFLUSH.
		return 0
	}
	dup, err := syscallcompat.Dup(f.cf.Fd())
	if err != nil {
		return n.toErrno("Flush", err)
	}
	return n.toErrno("Flush", syscallcompat.Close(dup))
}
