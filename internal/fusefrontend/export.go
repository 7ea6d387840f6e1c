package fusefrontend

import (
	"context"
	"strings"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"gocryptfs/internal/fuseutil"
)

// File handles (name_to_handle_at/open_by_handle_at, and exporting the
// mount over NFS): the kernel encodes a handle as the FUSE node ID and
// generation. The mount options (package mountopts) make the node ID the
// inode number the
// mount shows, which is the backing inode number (package inomap), so it
// stays valid when the kernel forgets the node and across remounts. The
// kernel then asks for the node by ID alone (LOOKUP of "."): LookupNode
// finds the entry by searching the tree for that inode number.

var _ = (fs.NodeLookupNoder)((*RootNode)(nil))

// LookupNode finds the entry whose shown inode number is id, for a file
// handle whose node the kernel and go-fuse have forgotten (or one from a
// previous mount). It walks the plaintext tree breadth-first, which costs
// a directory listing per directory up to the entry, and links the nodes
// of the path into go-fuse's tree so that the path-based operations work
// on the result.
func (rn *RootNode) LookupNode(ctx context.Context, id uint64, out *fuse.EntryOut) (ch *fs.Inode, errno syscall.Errno) {
	defer fuseutil.Recover(rn.log, "LookupNode", &errno)
	rn.enter("LookupNode")
	p, ok := rn.findIno(id)
	if !ok {
		return nil, syscall.ESTALE
	}
	cur, errno := rn.linkPath(ctx, p)
	if errno != 0 {
		return nil, errno
	}
	if cur.StableAttr().Ino != id {
		return nil, syscall.ESTALE // changed meanwhile
	}
	if err := rn.statPath(p, &out.Attr); err != nil {
		return nil, nodeOf(cur.Operations()).toErrno("LookupNode", err)
	}
	return cur, 0
}

// linkPath returns the node of the plaintext path p ("" is the root),
// looking up and linking into go-fuse's tree the components it does not
// hold, so that the path-based operations work on the result.
func (rn *RootNode) linkPath(ctx context.Context, p string) (*fs.Inode, syscall.Errno) {
	cur := rn.EmbeddedInode()
	if p == "" {
		return cur, 0
	}
	for comp := range strings.SplitSeq(p, "/") {
		next := cur.GetChild(comp)
		if next == nil {
			n := nodeOf(cur.Operations())
			var eo fuse.EntryOut
			c, errno := n.Lookup(ctx, comp, &eo)
			if errno != 0 {
				return nil, errno
			}
			cur.AddChild(comp, c, true)
			next = c
		}
		cur = next
	}
	return cur, 0
}

// findIno returns the plaintext path of an entry with shown inode number
// id.
func (rn *RootNode) findIno(id uint64) (string, bool) {
	queue := []string{""}
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		l, err := rn.readDir(dir)
		if err != nil {
			continue // vanished or unreadable: search the rest
		}
		list := l.ents
		l.Close()
		for _, de := range list {
			p := de.Name
			if dir != "" {
				p = dir + "/" + de.Name
			}
			if de.Ino == id {
				return p, true
			}
			if de.Mode&syscall.S_IFMT == syscall.S_IFDIR {
				queue = append(queue, p)
			}
		}
	}
	return "", false
}

var _ = (fs.NodeLookupParenter)((*Node)(nil))

// LookupParent returns the directory holding n, for the kernel's
// reconnection of a directory file handle.
func (n *Node) LookupParent(ctx context.Context, out *fuse.EntryOut) (parent *fs.Inode, name string, errno syscall.Errno) {
	rn := n.rn
	defer fuseutil.Recover(rn.log, "LookupParent", &errno)
	rn.enter("LookupParent")
	name, p := n.Parent()
	if p == nil {
		// n lost its place in go-fuse's tree although its entry may
		// well exist: a node that the kernel has not looked up (a
		// directory that LookupNode linked on the way to a file) is
		// dropped from the tree when the kernel forgets its last
		// child, and go-fuse processes FORGETs concurrently with the
		// LOOKUP of "." that registers a node by ID, so a directory
		// handle resolved while the kernel forgot a file below (memory
		// pressure, drop_caches) came out without a parent and its
		// reconnection failed with ESTALE. Find the entry again by
		// its inode number.
		var e syscall.Errno
		if p, name, e = rn.relink(ctx, n); e != 0 {
			return nil, "", e
		}
	}
	if err := rn.statPath(nodeOf(p.Operations()).relPath(), &out.Attr); err != nil {
		return nil, "", n.toErrno("LookupParent", err)
	}
	return p, name, 0
}

// Opening a node whose entry is gone (a node in no directory: the entry
// went after the kernel looked it up, most often an open racing a rename
// over the name, as in posixtest OpenSymlinkRace) answers ENOENT, what
// the name now says; ext4 would open the inode the path walk found, which
// we cannot. Not ESTALE: the kernel retries a path walk once on ESTALE,
// and when the retry loses the race too ESTALE reaches the caller, which
// no program expects from open(2) (posixtest failed on it under load). A
// file handle of a deleted file is still stale: the kernel has forgotten
// its node, and LookupNode answers ESTALE.

// relink finds the directory holding n, which has no parent in go-fuse's
// tree, by searching for n's inode number, and links the directory's path
// into the tree (see LookupParent).
func (rn *RootNode) relink(ctx context.Context, n *Node) (*fs.Inode, string, syscall.Errno) {
	p, ok := rn.findIno(n.StableAttr().Ino)
	if !ok {
		return nil, "", syscall.ESTALE
	}
	dir, name := "", p
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		dir, name = p[:i], p[i+1:]
	}
	parent, errno := rn.linkPath(ctx, dir)
	if errno != 0 {
		return nil, "", errno
	}
	return parent, name, 0
}
