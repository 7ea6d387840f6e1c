package fusefrontend_reverse

import (
	"context"
	"fmt"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/fuseutil"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/syscallcompat"
)

// virtualMode is the mode of gocryptfs.diriv and .name files in the view.
const virtualMode = syscall.S_IFREG | 0o444

// virtualTimeOffset is added to mtime and ctime of virtual files, as the
// reference does (docs/format.md 9.3).
const virtualTimeOffset = 10

// virtualNode is an in-memory file of the view: a gocryptfs.diriv (content
// pathiv(dir, "DIRIV")) or a gocryptfs.longname.<hash>.name (content: the
// full encrypted name). Owner and timestamps come from a plaintext entry:
// the directory, or the hashed entry.
//
// A .name file's inode number is tied to its ciphertext path, so its
// content and source never change. A gocryptfs.diriv keeps the inode
// number of its directory's across renames in PLAINDIR, so it derives
// content and source from its parent's current paths instead.
type virtualNode struct {
	fs.Inode
	memLeaf

	ino uint64
	// content and srcPath of a .name file; nil content means diriv.
	content []byte
	srcPath string
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

// newVirtual returns the inode of a virtual file below parent: a .name
// file with the given content and source entry, or, with nil content, the
// directory's gocryptfs.diriv.
func (rn *RootNode) newVirtual(ctx context.Context, parent *fs.Inode, ino uint64, content []byte, srcPath string, src *unix.Stat_t, out *fuse.Attr) *fs.Inode {
	v := &virtualNode{memLeaf: memLeaf{rn}, ino: ino, content: content, srcPath: srcPath}
	ch := parent.NewInode(ctx, v, fs.StableAttr{Mode: syscall.S_IFREG, Ino: ino})
	size := len(content)
	if content == nil {
		size = nametransform.DirIVLen
	}
	v.fillAttr(src, size, out)
	return ch
}

// get returns the current content and source path.
func (v *virtualNode) get() ([]byte, string, error) {
	if v.content != nil {
		return v.content, v.srcPath, nil
	}
	_, parent := v.Parent()
	if parent == nil {
		return nil, "", fmt.Errorf("%s without directory: %w", nametransform.DirIVFilename, syscall.ESTALE)
	}
	pn, ok := parent.Operations().(pathNode)
	if !ok {
		return nil, "", fmt.Errorf("parent of %s is not a directory node: %w", nametransform.DirIVFilename, syscall.EIO)
	}
	pDir, cDir, err := pn.paths()
	if err != nil {
		return nil, "", err
	}
	return nametransform.PathIV(cDir, nametransform.PurposeDirIV), pDir, nil
}

// fillAttr derives the attributes from the stat result of the source entry.
func (v *virtualNode) fillAttr(src *unix.Stat_t, size int, out *fuse.Attr) {
	fuseutil.AttrFromStat(src, out)
	out.Ino = v.ino
	out.Mode = virtualMode
	out.Nlink = 1
	out.Size = uint64(size)
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
	content, srcPath, err := v.get()
	if err != nil {
		return v.rn.errno("Getattr", err)
	}
	var st unix.Stat_t
	if err := v.rn.lstat(srcPath, &st); err != nil {
		return v.rn.errno("Getattr", err)
	}
	v.fillAttr(&st, len(content), &out.Attr)
	return 0
}

// Open allows reading only; the content is served from memory. The page
// cache is not kept across opens, since a rename in PLAINDIR can change
// the content.
func (v *virtualNode) Open(ctx context.Context, flags uint32) (fh fs.FileHandle, fuseFlags uint32, errno syscall.Errno) {
	defer fuseutil.Recover(v.rn.log, "Open", &errno)
	v.rn.enter("Open")
	if flags&writeFlags != 0 {
		return nil, 0, syscall.EROFS
	}
	return nil, 0, 0
}

// Read copies from the in-memory content.
func (v *virtualNode) Read(ctx context.Context, f fs.FileHandle, dest []byte, off int64) (res fuse.ReadResult, errno syscall.Errno) {
	defer fuseutil.Recover(v.rn.log, "Read", &errno)
	v.rn.enter("Read")
	if off < 0 {
		return nil, syscall.EINVAL
	}
	content, _, err := v.get()
	if err != nil {
		return nil, v.rn.errno("Read", err)
	}
	return readAt(dest, content, off), 0
}

// memLeaf is what the view's files held in memory (the virtual
// gocryptfs.diriv and .name files, gocryptfs.conf) share: no extended
// attributes, the plaintext filesystem's statistics, and EROFS for every
// change. Embedded in their node types; stateless apart from rn.
type memLeaf struct {
	rn *RootNode
}

// Getxattr: files held in memory have no attributes.
func (m *memLeaf) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	return 0, syscallcompat.NoAttr
}

// Listxattr: files held in memory have no attributes.
func (m *memLeaf) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	return 0, 0
}

// Statfs passes through the statistics of the plaintext filesystem.
func (m *memLeaf) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	return m.rn.statfs(out)
}

// Setattr: the view is read-only.
func (m *memLeaf) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return syscall.EROFS
}

// Setxattr: the view is read-only.
func (m *memLeaf) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	return syscall.EROFS
}

// Removexattr: the view is read-only.
func (m *memLeaf) Removexattr(ctx context.Context, attr string) syscall.Errno {
	return syscall.EROFS
}

// readAt answers a READ at off from data held in memory.
func readAt(dest, data []byte, off int64) fuse.ReadResult {
	if off >= int64(len(data)) {
		return fuse.ReadResultData(nil)
	}
	n := copy(dest, data[off:])
	return fuse.ReadResultData(dest[:n])
}
