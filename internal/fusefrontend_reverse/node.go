package fusefrontend_reverse

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gocryptfs/internal/fuseutil"
	"gocryptfs/internal/inomap"
	"gocryptfs/internal/nametransform"
	"gocryptfs/internal/syscallcompat"
)

// nodeKind is the type of a node backed by a plaintext entry.
type nodeKind uint8

const (
	kindDir nodeKind = iota
	kindFile
	kindSymlink
	// kindOther: fifo, socket or device node (listed, never opened here).
	kindOther
)

func kindOf(mode uint32) nodeKind {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		return kindDir
	case syscall.S_IFREG:
		return kindFile
	case syscall.S_IFLNK:
		return kindSymlink
	}
	return kindOther
}

// node is an entry of the view backed by a plaintext entry.
//
// A node does not own its paths: go-fuse's inode tree knows under which
// (newest) parent and name the kernel last reached it, which changes when
// PLAINDIR is renamed under the mount or a hard link is reached through
// another directory. paths derives both paths from the tree and caches the
// plaintext path for as long as the ciphertext path stays the same.
type node struct {
	fs.Inode

	rn   *RootNode
	kind nodeKind

	mu           sync.Mutex
	pPath, cPath string // cache: pPath is valid while the tree path is cPath
	cached       bool
}

// pathNode is implemented by the nodes that can be parents: *node and
// *RootNode.
type pathNode interface {
	paths() (pPath, cPath string, err error)
}

var (
	_ fs.NodeLookuper    = (*node)(nil)
	_ fs.NodeReaddirer   = (*node)(nil)
	_ fs.NodeGetattrer   = (*node)(nil)
	_ fs.NodeOpener      = (*node)(nil)
	_ fs.NodeReadlinker  = (*node)(nil)
	_ fs.NodeGetxattrer  = (*node)(nil)
	_ fs.NodeListxattrer = (*node)(nil)
	_ fs.NodeStatfser    = (*node)(nil)
)

// paths returns the plaintext and ciphertext paths of n relative to the
// roots ("" for the root).
func (n *node) paths() (pPath, cPath string, err error) {
	if n == &n.rn.node {
		return "", "", nil
	}
	name, parent := n.Parent()
	if parent == nil {
		return "", "", fmt.Errorf("node without parent: %w", syscall.ESTALE)
	}
	pn, ok := parent.Operations().(pathNode)
	if !ok {
		return "", "", fmt.Errorf("parent of %q is not a directory node: %w", name, syscall.EIO)
	}
	pDir, cDir, err := pn.paths()
	if err != nil {
		return "", "", err
	}
	cPath = joinPath(cDir, name)
	n.mu.Lock()
	if n.cached && n.cPath == cPath {
		pPath = n.pPath
		n.mu.Unlock()
		return pPath, cPath, nil
	}
	n.mu.Unlock()
	pName, err := n.rn.plainName(pDir, cDir, name)
	if err != nil {
		return "", "", err
	}
	pPath = joinPath(pDir, pName)
	n.setPaths(pPath, cPath)
	return pPath, cPath, nil
}

// setPaths fills the path cache.
func (n *node) setPaths(pPath, cPath string) {
	n.mu.Lock()
	n.pPath, n.cPath, n.cached = pPath, cPath, true
	n.mu.Unlock()
}

// errno converts err for the kernel, logging errors that carry no errno.
func (rn *RootNode) errno(op string, err error) syscall.Errno {
	e, known := fuseutil.ToErrno(err)
	if !known {
		rn.log.Error("unexpected error, returning EIO", "op", op, "err", err)
	}
	return e
}

// fillAttr converts the stat result of a plaintext entry into the view's
// attributes: remapped inode number, ciphertext size for files and
// encrypted symlinks, forced owner.
func (rn *RootNode) fillAttr(kind nodeKind, st *unix.Stat_t, out *fuse.Attr) {
	fuseutil.AttrFromStat(st, out)
	out.Ino = rn.translateIno(st)
	switch kind {
	case kindFile:
		out.Size = rn.ce.PlainSizeToCipherSize(uint64(st.Size))
	case kindSymlink:
		// The encrypted target is nonce ‖ SIV ‖ target in base64; its
		// length depends only on the plaintext target length, which
		// lstat reports as the symlink size.
		if !rn.nt.PlaintextNames() && st.Size > 0 {
			out.Size = uint64(rn.nt.B64().EncodedLen(rn.ce.BlockOverhead() + int(st.Size)))
		}
	}
	fuseutil.ApplyOwner(out, rn.args.ForceOwner)
}

// newChild returns the inode for a plaintext-backed child of parent. If
// go-fuse already has a node with the same identity (a repeated lookup, a
// hard link, a renamed directory), it keeps that one, which then finds its
// new paths through the tree.
func (rn *RootNode) newChild(ctx context.Context, parent *fs.Inode, kind nodeKind, pPath, cPath string, st *unix.Stat_t) *fs.Inode {
	n := &node{rn: rn, kind: kind, pPath: pPath, cPath: cPath, cached: true}
	id := fs.StableAttr{Mode: uint32(st.Mode & syscall.S_IFMT), Ino: rn.translateIno(st)}
	return parent.NewInode(ctx, n, id)
}

// Lookup finds name in the view directory n.
func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (ch *fs.Inode, errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Lookup", &errno)
	rn.enter("Lookup")
	pDir, cDir, err := n.paths()
	if err != nil {
		return nil, rn.errno("Lookup", err)
	}
	dirfd, err := rn.openDir(pDir)
	if err != nil {
		return nil, rn.errno("Lookup", err)
	}
	defer syscallcompat.Close(dirfd)
	var dirSt unix.Stat_t
	if err := syscallcompat.Fstat(dirfd, &dirSt); err != nil {
		return nil, rn.errno("Lookup", err)
	}
	r, err := rn.resolveName(dirfd, pDir, cDir, name, rn.boundary(&dirSt))
	if err != nil {
		return nil, rn.errno("Lookup", err)
	}
	if (r.kind == entryPlain || r.kind == entryNameFile) && rn.isMountPoint(&dirSt, r.pName) {
		// Checked before any stat of it, which would enter the view.
		return nil, syscall.ENOENT
	}
	cPath := joinPath(cDir, name)
	switch r.kind {
	case entryDirIV:
		return rn.newVirtual(ctx, n.EmbeddedInode(), rn.dirIVIno(&dirSt), nil, "", &dirSt, &out.Attr), 0
	case entryConfig:
		// Served from memory, whatever PLAINDIR holds now (config.go).
		if rn.conf == nil {
			return nil, syscall.ENOENT
		}
		return rn.newConfigNode(ctx, n.EmbeddedInode(), &out.Attr), 0
	case entryNameFile:
		pPath := joinPath(pDir, r.pName)
		var st unix.Stat_t
		if err := syscallcompat.Fstatat(dirfd, r.pName, &st); err != nil {
			return nil, rn.errno("Lookup", err)
		}
		if rn.excluded(pPath, st.Mode&syscall.S_IFMT == syscall.S_IFDIR) {
			return nil, syscall.EPERM
		}
		return rn.newVirtual(ctx, n.EmbeddedInode(), rn.nameFileIno(cPath), []byte(r.enc), pPath, &st, &out.Attr), 0
	}
	pPath := joinPath(pDir, r.pName)
	var st unix.Stat_t
	if err := syscallcompat.Fstatat(dirfd, r.pName, &st); err != nil {
		return nil, rn.errno("Lookup", err)
	}
	kind := kindOf(uint32(st.Mode))
	if rn.excluded(pPath, kind == kindDir) {
		return nil, syscall.EPERM
	}
	rn.fillAttr(kind, &st, &out.Attr)
	return rn.newChild(ctx, n.EmbeddedInode(), kind, pPath, cPath, &st), 0
}

// Readdir lists the view directory n: the encrypted names of the plaintext
// entries that are not excluded after "." and "..", a .name file next to every hashed name,
// gocryptfs.diriv, and in the root gocryptfs.conf (the loaded config, as
// a regular file whatever .gocryptfs.reverse.conf is now, as on lookup).
func (n *node) Readdir(ctx context.Context) (ds fs.DirStream, errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Readdir", &errno)
	rn.enter("Readdir")
	pDir, cDir, err := n.paths()
	if err != nil {
		return nil, rn.errno("Readdir", err)
	}
	fd, err := rn.openDir(pDir)
	if err != nil {
		return nil, rn.errno("Readdir", err)
	}
	defer syscallcompat.Close(fd)
	var dirSt unix.Stat_t
	if err := syscallcompat.Fstat(fd, &dirSt); err != nil {
		return nil, rn.errno("Readdir", err)
	}
	var entries []syscallcompat.DirEntry
	if !rn.boundary(&dirSt) {
		if entries, err = syscallcompat.Getdents(fd); err != nil {
			return nil, rn.errno("Readdir", err)
		}
	}
	out := make([]fuse.DirEntry, 0, len(entries)+3)
	out = append(out, fuseutil.DotEntries(n.EmbeddedInode())...)
	showConf := pDir == "" && rn.mapsConfig()
	for _, e := range entries {
		if showConf && e.Name == ReverseConfName {
			continue // listed below, from the loaded config
		}
		if rn.isMountPoint(&dirSt, e.Name) {
			continue
		}
		typ := e.Type
		if typ == 0 {
			var st unix.Stat_t
			if err := syscallcompat.Fstatat(fd, e.Name, &st); err != nil {
				continue // vanished meanwhile
			}
			typ = uint32(st.Mode & syscall.S_IFMT)
		}
		if rn.excluded(joinPath(pDir, e.Name), typ == syscall.S_IFDIR) {
			continue
		}
		stored, _, long, err := rn.viewName(pDir, cDir, e.Name)
		if err != nil {
			rn.log.Warn("Readdir: cannot encrypt name, skipping it", "dir", pDir, "name", e.Name, "err", err)
			continue
		}
		ino := rn.inos.Translate(inomap.QIno{Dev: uint64(dirSt.Dev), Ino: e.Ino})
		out = append(out, fuse.DirEntry{Name: stored, Mode: typ, Ino: ino})
		if long {
			nf := nametransform.LongNameFilename(stored)
			out = append(out, fuse.DirEntry{Name: nf, Mode: syscall.S_IFREG, Ino: rn.nameFileIno(joinPath(cDir, nf))})
		}
	}
	if showConf && rn.conf != nil {
		out = append(out, fuse.DirEntry{Name: nametransform.ConfDefaultName, Mode: syscall.S_IFREG, Ino: rn.confIno})
	}
	if rn.nt.UsesDirIV() {
		out = append(out, fuse.DirEntry{Name: nametransform.DirIVFilename, Mode: syscall.S_IFREG, Ino: rn.dirIVIno(&dirSt)})
	}
	return fs.NewListDirStream(out), 0
}

// Getattr reports the attributes of n, from the open file if there is one.
func (n *node) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) (errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Getattr", &errno)
	rn.enter("Getattr")
	var st unix.Stat_t
	if fh, ok := f.(*fileHandle); ok {
		if err := syscallcompat.Fstat(fh.fd, &st); err != nil {
			return rn.errno("Getattr", err)
		}
	} else {
		pPath, _, err := n.paths()
		if err != nil {
			return rn.errno("Getattr", err)
		}
		if err := rn.lstat(pPath, &st); err != nil {
			return rn.errno("Getattr", err)
		}
	}
	if kindOf(uint32(st.Mode)) != n.kind {
		// Replaced by an entry of another type since the lookup.
		return syscall.ENOENT
	}
	rn.fillAttr(n.kind, &st, &out.Attr)
	return 0
}

// writeFlags are open flags that would modify the file.
const writeFlags = syscall.O_WRONLY | syscall.O_RDWR | syscall.O_APPEND | syscall.O_TRUNC | syscall.O_CREAT

// Open opens a regular file for reading its ciphertext.
func (n *node) Open(ctx context.Context, flags uint32) (fh fs.FileHandle, fuseFlags uint32, errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Open", &errno)
	rn.enter("Open")
	if flags&writeFlags != 0 {
		return nil, 0, syscall.EROFS
	}
	if n.kind != kindFile {
		return nil, 0, syscall.EPERM
	}
	pPath, cPath, err := n.paths()
	if err != nil {
		return nil, 0, rn.errno("Open", err)
	}
	var fd int
	err = rn.at(pPath, func(dirfd int, name string) error {
		var err error
		// Not a plain open: a FIFO or device node swapped in since the
		// lookup must not be opened (that blocks, or wakes a FIFO writer,
		// or runs a driver's open routine).
		fd, err = syscallcompat.OpenFileAt(dirfd, name, unix.O_RDONLY)
		return err
	})
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.EISDIR) || errors.Is(err, syscall.ELOOP) {
		return nil, 0, syscall.EPERM // no longer a regular file
	}
	if err != nil {
		return nil, 0, rn.errno("Open", fmt.Errorf("open %q: %w", pPath, err))
	}
	var st unix.Stat_t
	if err := syscallcompat.Fstat(fd, &st); err != nil {
		syscallcompat.Close(fd)
		return nil, 0, rn.errno("Open", err)
	}
	return newFileHandle(rn, fd, rn.contentPath(&st, cPath)), 0, 0
}

// Readlink returns the encrypted target of a symlink (docs/format.md 9.5).
func (n *node) Readlink(ctx context.Context) (target []byte, errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Readlink", &errno)
	rn.enter("Readlink")
	if n.kind != kindSymlink {
		return nil, syscall.EINVAL
	}
	pPath, cPath, err := n.paths()
	if err != nil {
		return nil, rn.errno("Readlink", err)
	}
	var plain string
	err = rn.at(pPath, func(dirfd int, name string) error {
		var err error
		plain, err = syscallcompat.Readlinkat(dirfd, name)
		return err
	})
	if err != nil {
		return nil, rn.errno("Readlink", err)
	}
	enc, err := rn.nt.EncryptSymlinkTargetNonce(plain, nametransform.ReverseSymlinkNonce(cPath))
	if err != nil {
		return nil, rn.errno("Readlink", err)
	}
	return []byte(enc), 0
}

// withPathFd runs fn with an O_PATH fd of the plaintext entry pPath.
func (rn *RootNode) withPathFd(pPath string, fn func(fd int) error) error {
	if pPath == "" {
		return fn(rn.rootFd)
	}
	return rn.at(pPath, func(dirfd int, name string) error {
		fd, err := syscallcompat.OpenPathAt(dirfd, name)
		if err != nil {
			return err
		}
		defer syscallcompat.Close(fd)
		return fn(fd)
	})
}

// Getxattr returns the encrypted value of the view attribute attr
// (docs/format.md 9.6); ACL attributes pass through.
func (n *node) Getxattr(ctx context.Context, attr string, dest []byte) (size uint32, errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Getxattr", &errno)
	rn.enter("Getxattr")
	if rn.args.NoXattr {
		return 0, syscallcompat.NoAttr
	}
	acl := nametransform.IsACLName(attr)
	plainName := attr
	if !acl {
		var err error
		if plainName, err = rn.nt.DecryptXattrName(attr); err != nil {
			return 0, syscallcompat.NoAttr
		}
	}
	pPath, cPath, err := n.paths()
	if err != nil {
		return 0, rn.errno("Getxattr", err)
	}
	var val []byte
	err = rn.withPathFd(pPath, func(fd int) error {
		var err error
		val, err = syscallcompat.FgetxattrAll(fd, plainName)
		return err
	})
	if err != nil {
		return 0, rn.errno("Getxattr", err)
	}
	if !acl {
		if val, err = rn.nt.EncryptXattrValueNonce(val, nametransform.ReverseXattrNonce(cPath, attr)); err != nil {
			return 0, rn.errno("Getxattr", err)
		}
	}
	return fuseutil.XattrResult(dest, val)
}

// Listxattr lists the encrypted names of the plaintext attributes.
func (n *node) Listxattr(ctx context.Context, dest []byte) (size uint32, errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "Listxattr", &errno)
	rn.enter("Listxattr")
	if rn.args.NoXattr {
		return 0, 0
	}
	pPath, _, err := n.paths()
	if err != nil {
		return 0, rn.errno("Listxattr", err)
	}
	var names []string
	err = rn.withPathFd(pPath, func(fd int) error {
		var err error
		names, err = syscallcompat.FlistxattrAll(fd)
		return err
	})
	if err != nil {
		return 0, rn.errno("Listxattr", err)
	}
	var buf []byte
	for _, name := range names {
		enc, err := rn.nt.EncryptXattrName(name)
		if err != nil {
			rn.log.Warn("Listxattr: cannot encrypt attribute name, skipping it", "path", pPath, "err", err)
			continue
		}
		buf = append(buf, enc...)
		buf = append(buf, 0)
	}
	return fuseutil.XattrResult(dest, buf)
}

// Statfs passes through the statistics of the plaintext filesystem.
func (n *node) Statfs(ctx context.Context, out *fuse.StatfsOut) (errno syscall.Errno) {
	return n.rn.statfs(out)
}

func (rn *RootNode) statfs(out *fuse.StatfsOut) (errno syscall.Errno) {
	defer fuseutil.Recover(rn.log, "Statfs", &errno)
	rn.enter("Statfs")
	var st unix.Statfs_t
	if err := syscallcompat.Fstatfs(rn.rootFd, &st); err != nil {
		return rn.errno("Statfs", err)
	}
	fuseutil.StatfsFromUnix(&st, out)
	return 0
}
