package fusefrontend_reverse

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/fuseutil"
)

// virtualMode is the mode of gocryptfs.diriv and .name files in the view.
const virtualMode = syscall.S_IFREG | 0o444

// virtualTimeOffset is added to mtime and ctime of virtual files, as the
// reference does (FORMAT.md 9.3).
const virtualTimeOffset = 10

// virtualNode is an in-memory file of the view: a gocryptfs.diriv (content
// pathiv(dir, "DIRIV")) or a gocryptfs.longname.<hash>.name (content: the
// full encrypted name). Owner and timestamps come from a plaintext entry:
// the directory, or the hashed entry.
type virtualNode struct {
	fs.Inode

	rn      *RootNode
	content []byte
	// srcPath is the plaintext entry whose owner and times are shown.
	srcPath string
	ino     uint64
}

var (
	_ fs.NodeGetattrer   = (*virtualNode)(nil)
	_ fs.NodeOpener      = (*virtualNode)(nil)
	_ fs.NodeReader      = (*virtualNode)(nil)
	_ fs.NodeGetxattrer  = (*virtualNode)(nil)
	_ fs.NodeListxattrer = (*virtualNode)(nil)
	_ fs.NodeStatfser    = (*virtualNode)(nil)
	_ fs.NodeSetattrer   = (*virtualNode)(nil)
)

// fillAttr derives the attributes from the stat result of the source entry.
func (v *virtualNode) fillAttr(src *unix.Stat_t, out *fuse.Attr) {
	fuseutil.AttrFromStat(src, out)
	out.Ino = v.ino
	out.Mode = virtualMode
	out.Nlink = 1
	out.Size = uint64(len(v.content))
	out.Blocks = (out.Size + 511) / 512
	out.Rdev = 0
	out.Mtime += virtualTimeOffset
	out.Ctime += virtualTimeOffset
	fuseutil.ApplyOwner(out, v.rn.args.ForceOwner)
}

// Getattr re-reads the source entry so that owner and times stay current.
func (v *virtualNode) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) (errno syscall.Errno) {
	defer fuseutil.Recover(v.rn.log, "Getattr", &errno)
	v.rn.enter("Getattr")
	var st unix.Stat_t
	if err := v.rn.lstat(v.srcPath, &st); err != nil {
		return v.rn.errno("Getattr", err)
	}
	v.fillAttr(&st, &out.Attr)
	return 0
}

// Open allows reading only; the content is served from memory.
func (v *virtualNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if flags&writeFlags != 0 {
		return nil, 0, syscall.EROFS
	}
	return nil, fuse.FOPEN_KEEP_CACHE, 0
}

// Read copies from the in-memory content.
func (v *virtualNode) Read(ctx context.Context, f fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if off < 0 {
		return nil, syscall.EINVAL
	}
	if off >= int64(len(v.content)) {
		return fuse.ReadResultData(nil), 0
	}
	n := copy(dest, v.content[off:])
	return fuse.ReadResultData(dest[:n]), 0
}

// Getxattr: virtual files have no attributes.
func (v *virtualNode) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	return 0, syscall.ENODATA
}

// Listxattr: virtual files have no attributes.
func (v *virtualNode) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	return 0, 0
}

// Statfs passes through the statistics of the plaintext filesystem.
func (v *virtualNode) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	return v.rn.statfs(out)
}

// Setattr: the view is read-only.
func (v *virtualNode) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return syscall.EROFS
}

// Setxattr: the view is read-only.
func (v *virtualNode) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	return syscall.EROFS
}

// Removexattr: the view is read-only.
func (v *virtualNode) Removexattr(ctx context.Context, attr string) syscall.Errno {
	return syscall.EROFS
}
